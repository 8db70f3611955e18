import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { prepared } from '../../src/db/prepared.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';

describe.each(TEST_DATABASES)('prepared queries on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
    await db
      .insertInto('tool_state')
      .values([
        { name: 'alpha', enabled: true },
        { name: 'beta', enabled: false },
        { name: 'gamma', enabled: true },
      ])
      .execute();
  });
  afterAll(() => opened.dispose());

  it('should build and compile once per database, then run with each call’s values wherever they appear', async () => {
    let builds = 0;
    const query = prepared(['name', 'enabled'], (handle, args: { name: string; enabled: boolean }) => {
      builds += 1;
      return handle
        .selectFrom('tool_state')
        .select('name')
        .where((eb) => eb.or([eb('name', '=', args.name), eb.and([eb('enabled', '=', args.enabled), eb('name', '!=', args.name)])]))
        .orderBy('name');
    });
    expect((await query(db, { name: 'beta', enabled: true })).map((row) => row.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect((await query(db, { name: 'alpha', enabled: false })).map((row) => row.name)).toEqual(['alpha', 'beta']);
    expect((await query(db, { name: "x' or '1'='1", enabled: false })).map((row) => row.name)).toEqual(['beta']);
    expect(builds).toBe(1);
  });

  it('should refuse a query whose argument did not become a parameter (its shape would depend on the value)', async () => {
    const query = prepared(['name'], (handle, _args: { name: string }) => handle.selectFrom('tool_state').select('name'));
    await expect(query(db, { name: 'alpha' })).rejects.toThrow('prepared query: name did not become parameters');
  });
});

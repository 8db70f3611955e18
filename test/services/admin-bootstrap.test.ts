import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { bootstrapAdmin } from '../../src/services/users.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';

/**
 * The instances of a deployment start at once on a new database, each bootstrapping the admin:
 * exactly one creates it, the others find it (two instances started together once failed with a
 * unique violation on the admin's name, and one of them did not start).
 */
describe.each(TEST_DATABASES)('the admin bootstrap of instances starting at once on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  it('should create one admin with the configured token when six instances bootstrap it at once', async () => {
    const token = `bootstrap-${randomBytes(8).toString('hex')}`;
    const results = await Promise.all(Array.from({ length: 6 }, () => bootstrapAdmin(db, token)));
    expect(results.map((result) => result.kind)).toEqual(Array.from({ length: 6 }, () => 'configured'));
    const admins = await db.selectFrom('users').select(['id', 'is_admin']).where('name', '=', 'admin').execute();
    expect(admins).toHaveLength(1);
    expect(new Set(results.map((result) => (result.kind === 'configured' ? result.user.id : null)))).toEqual(new Set([admins[0]!.id]));
  });
});

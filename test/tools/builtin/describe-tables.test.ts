import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveGrant } from '../../../src/db/repositories/grants.ts';
import { seedRecords } from '../../../src/db/repositories/records-seed.ts';
import { NO_ACTOR_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import { describeTablesTool } from '../../../src/tools/builtin/describe-tables.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { TableArtifact } from '../../../src/tools/result.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { insertActor, invoke, toolContext, toolDataOver, untouchableData } from './helpers.ts';

describe.each(TEST_DATABASES)('describe_tables (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let data: ToolData;
  let admin: Actor;
  let reader: Actor;
  let stranger: Actor;
  let beforeSeed: { tables: unknown; rows: unknown };

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    const db = opened.handle.db;
    admin = await insertActor(db, 'root', true);
    data = toolDataOver(db, kind);
    // Before the operator creates the records schema, there is simply nothing to read.
    beforeSeed = {
      tables: await data.records.listTables(admin),
      rows: await data.records.readRows(admin, { table: 'customers', filters: [], limit: 5, offset: 0 }),
    };
    await seedRecords(db);
    await sql`create table records.tagged (id integer primary key, tags text[], api_key text)`.execute(db);
    reader = await insertActor(db, 'reader', false);
    stranger = await insertActor(db, 'stranger', false);
    await saveGrant(db, reader.id, 'orders', 'READ');
    await saveGrant(db, reader.id, 'tagged', 'WRITE');
    await saveGrant(db, reader.id, 'ghost', 'READ');
  });

  afterAll(async () => {
    await dispose();
  });

  const describeFor = (actor: Actor | null) => invoke(describeTablesTool, {}, toolContext(data, actor));
  const tablesIn = (artifact: TableArtifact) => [...new Set(artifact.data.rows.map((row) => row[0]))];

  it('should show a non-admin only the tables granted to them (any mode)', async () => {
    const result = await describeFor(reader);
    expect(result.isError).toBe(false);
    expect(tablesIn(result.artifacts[0] as TableArtifact)).toEqual(['orders', 'tagged']);
    expect(result.content).toContain('orders: id integer, customer_id integer, total numeric, status text, created_at timestamp with time zone');
    expect(result.content).not.toContain('customers');
    // A grant for a table that does not exist shows nothing.
    expect(result.content).not.toContain('ghost');
  });

  it('should show an admin every table of the records schema and nothing else', async () => {
    const result = await describeFor(admin);
    expect(tablesIn(result.artifacts[0] as TableArtifact)).toEqual(['customers', 'orders', 'tagged']);
    expect(result.content).not.toMatch(/\busers\b|table_grants|providers/);
  });

  it('should mark credential-like columns as masked and name array types', async () => {
    const result = await describeFor(admin);
    expect(result.content).toContain('password_hash text (masked)');
    expect(result.content).toContain('tagged: id integer, tags _text, api_key text (masked)');
    const rows = (result.artifacts[0] as TableArtifact).data.rows;
    expect(rows).toContainEqual(['customers', 'password_hash', 'text', 'yes']);
    expect(rows).toContainEqual(['customers', 'email', 'text', 'no']);
  });

  it('should find no tables and no rows while the records schema does not exist', () => {
    expect(beforeSeed).toEqual({ tables: [], rows: { error: 'noSuchTable' } });
  });

  it('should say so when no table is available', async () => {
    const result = await describeFor(stranger);
    expect(result.isError).toBe(false);
    expect(result.content).toBe('No tables are available to you.');
  });

  it('should refuse without an acting user and read nothing', async () => {
    const { data: untouchable, touched } = untouchableData();
    const result = await invoke(describeTablesTool, {}, toolContext(untouchable, null));
    expect(result.content).toBe(NO_ACTOR_ERROR);
    expect(result.isError).toBe(true);
    expect(touched).toEqual([]);
  });
});

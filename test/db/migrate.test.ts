import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../../src/db/create-db.ts';
import { migrateDownAll, migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';

const TABLES = [
  'budget_counters',
  'budgets',
  'configuration_skills',
  'configurations',
  'models',
  'providers',
  'run_steps',
  'runs',
  'skills',
  'table_grants',
  'tool_group_state',
  'tool_state',
  'usage_records',
  'users',
];

async function publicTables(handle: DbHandle): Promise<string[]> {
  const result = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_name not like 'kysely_%' order by table_name`.execute(handle.db);
  return result.rows.map((row) => row.table_name);
}

describe.each(TEST_DATABASES)('migrations on %s', (kind) => {
  let database: TestDatabase;
  let handle: DbHandle;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    handle = await database.open();
  });
  afterAll(async () => {
    await handle.close();
    await database.drop();
  });

  it('should create every table on the way up', async () => {
    const applied = await migrateToLatest(handle.db);
    expect(applied.length).toBeGreaterThanOrEqual(9);
    expect(await publicTables(handle)).toEqual(TABLES);
  });

  it('should be a no-op when already up to date', async () => {
    expect(await migrateToLatest(handle.db)).toEqual([]);
  });

  it('should remove every table on the way down and come back up cleanly', async () => {
    const reverted = await migrateDownAll(handle.db);
    expect(reverted.length).toBeGreaterThanOrEqual(9);
    expect(await publicTables(handle)).toEqual([]);
    await migrateToLatest(handle.db);
    expect(await publicTables(handle)).toEqual(TABLES);
  });

  it('should default maxIterations to 5 and privacy to METADATA at the database level', async () => {
    const providerId = crypto.randomUUID();
    const modelId = crypto.randomUUID();
    await handle.db.insertInto('providers').values({ id: providerId, name: 'p', kind: 'SCRIPTED', settings: '{}' }).execute();
    await handle.db.insertInto('models').values({ id: modelId, provider_id: providerId, name: 'm', provider_model_id: 'm' }).execute();
    const row = await handle.db
      .insertInto('configurations')
      .values({ id: crypto.randomUUID(), name: 'c', model_id: modelId, allowed_tool_groups: '[]' })
      .returningAll()
      .executeTakeFirstOrThrow();
    expect(row.max_iterations).toBe(5);
    expect(row.privacy_level).toBe('METADATA');
    expect(row.allowed_tool_groups).toEqual([]);
  });

  it('should default truncation to HEAD at the database level and refuse a mode it does not know', async () => {
    const [model] = await handle.db.selectFrom('models').select('id').execute();
    const row = await handle.db
      .insertInto('configurations')
      .values({ id: crypto.randomUUID(), name: 'truncation-default', model_id: model!.id, allowed_tool_groups: '[]' })
      .returningAll()
      .executeTakeFirstOrThrow();
    expect(row.truncation).toBe('HEAD');
    await expect(
      sql`update configurations set truncation = 'TAIL' where id = ${row.id}`.execute(handle.db),
    ).rejects.toThrow(/check constraint/);
  });
});

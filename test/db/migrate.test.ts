import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../../src/db/create-db.ts';
import { createMigrator, migrateDownAll, migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, migrationNamesInFolder, TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';

const TABLES = [
  'budget_counters',
  'budgets',
  'configuration_skills',
  'configurations',
  'mcp_servers',
  'mcp_tools',
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

  it('should let several starts migrate one new database at once: one applies every migration, the others find them applied', async () => {
    const fresh = await createTestDatabase(kind);
    const shared = await fresh.open();
    try {
      // On PostgreSQL the pool gives each call a connection of its own: real concurrency.
      const results = await Promise.all(Array.from({ length: 4 }, () => migrateToLatest(shared.db)));
      const names = migrationNamesInFolder();
      expect(results.filter((applied) => applied.length > 0)).toEqual([names]);
      expect(await publicTables(shared)).toEqual(TABLES);
      expect(await migrateToLatest(shared.db)).toEqual([]);
    } finally {
      await shared.close();
      await fresh.drop();
    }
  });

  it('should refuse to start on a database that applied a migration the folder lacks, even when the count matches', async () => {
    const [last] = (await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(handle.db)).rows;
    const rename = (from: string, to: string) => sql`update kysely_migration set name = ${to} where name = ${from}`.execute(handle.db);
    await rename(last!.name, '29991231000000_from-a-newer-version');
    try {
      await expect(migrateToLatest(handle.db)).rejects.toThrow(/29991231000000_from-a-newer-version/);
      await sql`insert into kysely_migration (name, timestamp) values (${last!.name}, ${new Date().toISOString()})`.execute(handle.db);
      await expect(migrateToLatest(handle.db)).rejects.toThrow(/29991231000000_from-a-newer-version/);
    } finally {
      await sql`delete from kysely_migration where name = '29991231000000_from-a-newer-version'`.execute(handle.db);
      await sql`insert into kysely_migration (name, timestamp) select ${last!.name}, ${new Date().toISOString()} where not exists (select 1 from kysely_migration where name = ${last!.name})`.execute(handle.db);
    }
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

  it('should add users.active (true for the users already there) and token_rotated_at, and take both away on the way down', async () => {
    const LIFECYCLE = '20261201140000_add-user-lifecycle';
    const names = migrationNamesInFolder();
    const before = names[names.indexOf(LIFECYCLE) - 1]!;
    const userColumns = async () =>
      (await sql<{ column_name: string }>`select column_name from information_schema.columns where table_schema = 'public' and table_name = 'users'`.execute(handle.db)).rows
        .map((row) => row.column_name)
        .sort();
    const migrateTo = async (name: string) => {
      const { error } = await createMigrator(handle.db).migrateTo(name);
      if (error) throw error;
    };
    await migrateTo(before);
    expect(await userColumns()).not.toContain('active');
    const id = crypto.randomUUID();
    await sql`insert into users (id, name, token_hash) values (${id}, 'from-before', ${'f'.repeat(64)})`.execute(handle.db);
    await migrateTo(LIFECYCLE);
    expect(await userColumns()).toEqual(expect.arrayContaining(['active', 'token_rotated_at']));
    const row = await handle.db.selectFrom('users').select(['active', 'token_rotated_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ active: true, token_rotated_at: null });
    await migrateTo(before);
    const columns = await userColumns();
    expect(columns).not.toContain('active');
    expect(columns).not.toContain('token_rotated_at');
    await migrateToLatest(handle.db);
    await handle.db.deleteFrom('users').where('id', '=', id).execute();
  });

  it('should index every runs(filter) list and the usage summary ranges, and put the old indexes back on the way down', async () => {
    const INDEXES = '20261201170000_index-run-lists-and-usage';
    const names = migrationNamesInFolder();
    const before = names[names.indexOf(INDEXES) - 1]!;
    const indexes = async () =>
      Object.fromEntries(
        (await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename in ('runs', 'usage_records')`.execute(handle.db)).rows
          .map((row) => [row.indexname, row.indexdef.replace(/^.* USING btree /, '')]),
      );
    const migrateTo = async (name: string) => {
      const { error } = await createMigrator(handle.db).migrateTo(name);
      if (error) throw error;
    };
    const RUN_LISTS = {
      runs_created_id_idx: '(created_at, id)',
      runs_user_created_id_idx: '(user_id, created_at, id)',
      runs_configuration_created_id_idx: '(configuration_id, created_at, id)',
      runs_status_created_id_idx: '(status, created_at, id)',
      runs_reason_created_id_idx: '(termination_reason, created_at, id)',
    };
    const USAGE = {
      usage_records_created_idx: '(created_at) INCLUDE (user_id, configuration_id, model_id, prompt_tokens, completion_tokens, cost)',
      usage_records_user_idx: '(user_id, created_at) INCLUDE (configuration_id, model_id, prompt_tokens, completion_tokens, cost)',
      usage_records_model_idx: '(model_id, created_at)',
    };
    const REPLACED = ['runs_created_idx', 'runs_user_created_idx'];
    const latest = await indexes();
    expect(latest).toMatchObject({ ...RUN_LISTS, ...USAGE, runs_status_idx: '(status)', usage_records_configuration_idx: '(configuration_id, created_at)' });
    for (const name of REPLACED) expect(latest).not.toHaveProperty(name);

    await migrateTo(before);
    const earlier = await indexes();
    expect(earlier).toMatchObject({ runs_created_idx: '(created_at)', runs_user_created_idx: '(user_id, created_at)', runs_status_idx: '(status)', usage_records_user_idx: '(user_id, created_at)' });
    for (const name of [...Object.keys(RUN_LISTS), 'usage_records_created_idx', 'usage_records_model_idx']) expect(earlier).not.toHaveProperty(name);
    await migrateToLatest(handle.db);
    expect(await indexes()).toEqual(latest);
  });
});

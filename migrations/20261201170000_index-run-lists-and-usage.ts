import { type Kysely, sql } from 'kysely';

// Indexes for the dashboard's lists (issue 14), checked with EXPLAIN at 100 000 runs and
// 1 000 000 usage rows by bench/bin/explain.ts.
//
// runs(filter): every list is ordered by (created_at desc, id desc) and pages on that key, so
// each filter column leads an index that ends in (created_at, id): the first page is the top of
// one index range, and a totalCount is an index-only count of that range. The two indexes they
// make redundant are dropped (and recreated on the way down). `runs_status_idx` (status) stays:
// with five values its deduplicated btree is the smallest index of runs, and an admin's
// filter-less totalCount (every run, necessarily) is an index-only scan of it rather than a
// sequential scan of the table.
//
// usageSummary: a range of created_at, all users (admin) or one user. Both indexes carry the
// summed and grouped columns (INCLUDE), so a summary is an index-only scan of its range.
const RUN_LISTS = [
  ['runs_created_id_idx', []],
  ['runs_user_created_id_idx', ['user_id']],
  ['runs_configuration_created_id_idx', ['configuration_id']],
  ['runs_status_created_id_idx', ['status']],
  ['runs_reason_created_id_idx', ['termination_reason']],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, leading] of RUN_LISTS) {
    await db.schema.createIndex(name).on('runs').columns([...leading, 'created_at', 'id']).execute();
  }
  await db.schema.dropIndex('runs_created_idx').execute();
  await db.schema.dropIndex('runs_user_created_idx').execute();

  await sql`create index usage_records_created_idx on usage_records (created_at)
    include (user_id, configuration_id, model_id, prompt_tokens, completion_tokens, cost)`.execute(db);
  await db.schema.dropIndex('usage_records_user_idx').execute();
  await sql`create index usage_records_user_idx on usage_records (user_id, created_at)
    include (configuration_id, model_id, prompt_tokens, completion_tokens, cost)`.execute(db);
  await db.schema.createIndex('usage_records_model_idx').on('usage_records').columns(['model_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('usage_records_model_idx').execute();
  await db.schema.dropIndex('usage_records_user_idx').execute();
  await db.schema.createIndex('usage_records_user_idx').on('usage_records').columns(['user_id', 'created_at']).execute();
  await db.schema.dropIndex('usage_records_created_idx').execute();

  await db.schema.createIndex('runs_user_created_idx').on('runs').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('runs_created_idx').on('runs').column('created_at').execute();
  for (const [name] of RUN_LISTS) await db.schema.dropIndex(name).execute();
}

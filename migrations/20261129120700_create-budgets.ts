import { type Kysely, sql } from 'kysely';

// Spending limits and the usage they are checked against. A limit of 0 means unlimited.
// `subject_id` is a user id or a configuration id depending on `scope` (no foreign key: a budget
// outlives nothing, it is deleted with its subject by the service).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('budgets')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('scope', 'text', (col) => col.notNull().check(sql`scope in ('USER', 'CONFIGURATION')`))
    .addColumn('subject_id', 'uuid', (col) => col.notNull())
    .addColumn('period', 'text', (col) => col.notNull().check(sql`period in ('DAILY', 'MONTHLY')`))
    .addColumn('max_requests', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('max_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('max_cost', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('budgets_subject_period_unique', ['scope', 'subject_id', 'period'])
    .execute();
  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid')
    .addColumn('configuration_id', 'uuid')
    .addColumn('run_id', 'uuid')
    .addColumn('model_id', 'uuid')
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('usage_records_user_idx').on('usage_records').columns(['user_id', 'created_at']).execute();
  await db.schema
    .createIndex('usage_records_configuration_idx')
    .on('usage_records')
    .columns(['configuration_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('usage_records').execute();
  await db.schema.dropTable('budgets').execute();
}

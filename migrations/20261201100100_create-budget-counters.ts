import type { Kysely } from 'kysely';

// What each budget has reserved and spent in one period (the start of the UTC day or month):
// the row a pre-flight locks, checks and updates, so that concurrent runs cannot all pass the same
// check. Created at the first pre-flight of the period, seeded from that period's usage records;
// deleted with its budget. Older periods of a budget are pruned when a new one starts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('budget_counters')
    .addColumn('budget_id', 'uuid', (col) => col.notNull().references('budgets.id').onDelete('cascade'))
    .addColumn('period_start', 'timestamptz', (col) => col.notNull())
    .addColumn('requests', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('tokens', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (col) => col.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('budget_counters_pk', ['budget_id', 'period_start'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('budget_counters').execute();
}

import type { Kysely } from 'kysely';

// A per-run counter raised by every change of a run's state (parked, claimed for a decision,
// settled), so the live list feeds can tell whether an event is older than the snapshot they read.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('state_version', 'integer', (column) => column.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('state_version').execute();
}

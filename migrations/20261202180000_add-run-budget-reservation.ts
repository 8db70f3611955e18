import type { Kysely } from 'kysely';

// The budget reservation of a run's provider call in flight (durable runs, issue 27): written in
// the transaction that reserves it on the budget counters, cleared when the call's usage replaces
// it or when it is given back. A run taken over from a process that died mid-call gives the dead
// call's planned cost back once, so the call made again is counted once.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('budget_reservation', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('budget_reservation').execute();
}

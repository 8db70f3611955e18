import type { Kysely } from 'kysely';

// A cancellation asked for on an instance that does not drive the run: the driving instance reads
// it at its next heartbeat (the Redis control message makes it immediate while Redis is up).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('cancel_requested_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('cancel_requested_at').execute();
}

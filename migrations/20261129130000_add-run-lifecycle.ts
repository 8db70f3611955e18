import { type Kysely, sql } from 'kysely';

// What a run needs beyond its first shape: a heartbeat (so a run whose process died is settled
// INTERRUPTED by whichever process notices, without touching runs other replicas are driving),
// the generic error message shown to clients, the run's own tool selection, and when retention
// purged its content down to metadata.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('heartbeat_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('error_message', 'text')
    .addColumn('tool_selection', 'jsonb')
    .addColumn('content_purged_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('runs_created_idx').on('runs').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('runs_created_idx').execute();
  await db.schema
    .alterTable('runs')
    .dropColumn('content_purged_at')
    .dropColumn('tool_selection')
    .dropColumn('error_message')
    .dropColumn('heartbeat_at')
    .execute();
}

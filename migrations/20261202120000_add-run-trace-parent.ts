import type { Kysely } from 'kysely';

// The W3C traceparent of the span that started a run: a run resumed after an approval (on any
// instance) links its span to the trace it started in.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('trace_parent', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('trace_parent').execute();
}

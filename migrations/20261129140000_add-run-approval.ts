import { type Kysely, sql } from 'kysely';

// Human approval of write tools: a suspended run keeps its state sealed (AES-256-GCM under the
// master key, bound to the run id) and the digest of the turn it waits on; the decision is stored
// as an APPROVAL step; a configuration may require a second person to approve.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('suspended_state', 'text')
    .addColumn('suspended_digest', 'text')
    .execute();
  await db.schema.alterTable('run_steps').dropConstraint('run_steps_kind_check').execute();
  await db.schema
    .alterTable('run_steps')
    .addCheckConstraint('run_steps_kind_check', sql`kind in ('REQUEST', 'LLM', 'TOOL', 'APPROVAL')`)
    .execute();
  await db.schema
    .alterTable('configurations')
    .addColumn('require_second_approver', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('configurations').dropColumn('require_second_approver').execute();
  await db.deleteFrom('run_steps').where('kind', '=', 'APPROVAL').execute();
  await db.schema.alterTable('run_steps').dropConstraint('run_steps_kind_check').execute();
  await db.schema.alterTable('run_steps').addCheckConstraint('run_steps_kind_check', sql`kind in ('REQUEST', 'LLM', 'TOOL')`).execute();
  await db.schema.alterTable('runs').dropColumn('suspended_digest').dropColumn('suspended_state').execute();
}

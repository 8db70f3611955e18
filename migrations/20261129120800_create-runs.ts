import { type Kysely, sql } from 'kysely';

// Agent runs and their steps: the privacy-filtered persisted copy. Steps are ordered by
// `sequence` within a run; `payload` holds the (filtered) step body.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('runs')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('configuration_id', 'uuid', (col) => col.references('configurations.id').onDelete('set null'))
    .addColumn('user_id', 'uuid', (col) => col.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .check(sql`status in ('RUNNING', 'WAITING_FOR_APPROVAL', 'COMPLETED', 'FAILED', 'CANCELLED')`),
    )
    .addColumn('termination_reason', 'text')
    .addColumn('truncated', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('iterations', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('prompt', 'text')
    .addColumn('final_content', 'text')
    .addColumn('privacy_level', 'text', (col) => col.notNull())
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('estimated_cost', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('audit_incomplete', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('runs_user_created_idx').on('runs').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('runs_status_idx').on('runs').column('status').execute();
  await db.schema
    .createTable('run_steps')
    .addColumn('run_id', 'uuid', (col) => col.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('sequence', 'integer', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('REQUEST', 'LLM', 'TOOL')`))
    .addColumn('round', 'integer', (col) => col.notNull())
    .addColumn('duration_ms', 'double precision')
    .addColumn('payload', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('run_steps_pk', ['run_id', 'sequence'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('run_steps').execute();
  await db.schema.dropTable('runs').execute();
}

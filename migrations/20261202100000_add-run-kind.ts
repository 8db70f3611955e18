import { sql, type Kysely } from 'kysely';

// What started a run: the agent loop (runAgent, startRun) or an MCP session (one run per session,
// one TOOL step per tools/call). Existing runs are agent runs.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('kind', 'text', (column) => column.notNull().defaultTo('AGENT').check(sql`kind in ('AGENT', 'MCP')`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('kind').execute();
}

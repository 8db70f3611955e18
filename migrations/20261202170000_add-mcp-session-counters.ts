import type { Kysely } from 'kysely';

// An MCP session lives in its run row, not in the process that opened it: any instance serves its
// requests, and two of them may serve one session at once. What the session counts therefore counts
// here, by atomic updates of the row:
// - mcp_last_sequence: the sequence of the session's last stored TOOL step; a step takes the next
//   one in the statement that stores it, so steps stored by several instances stay 1..n, no
//   duplicate, no gap;
// - mcp_remote_calls: the remote (imported) tool calls the session made, against the
//   configuration's max_remote_tool_calls.
// Both stay 0 for agent runs.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('mcp_last_sequence', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('mcp_remote_calls', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('mcp_last_sequence').dropColumn('mcp_remote_calls').execute();
}

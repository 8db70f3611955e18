import { type Kysely, sql } from 'kysely';

// Calls of remote (MCP-imported) tools one run may make; later calls are refused. 0 = none allowed.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('configurations')
    .addColumn('max_remote_tool_calls', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(20)
        .check(sql`max_remote_tool_calls between 0 and 1000`),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('configurations').dropColumn('max_remote_tool_calls').execute();
}

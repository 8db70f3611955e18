import { type Kysely, sql } from 'kysely';

// Remote MCP servers an admin imported, and the tools each one listed at its last refresh. Header
// values (often tokens) are stored only as AES-256-GCM ciphertext bound to the server row.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_servers')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('headers_ciphertext', 'text')
    .addColumn('refreshed_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // A tool name is unique across servers (and, checked by the registry, across every tool source).
  await db.schema
    .createTable('mcp_tools')
    .addColumn('server_id', 'uuid', (col) => col.notNull().references('mcp_servers.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull())
    .addColumn('input_schema', 'jsonb', (col) => col.notNull())
    .addColumn('admin_only', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('unavailable_reason', 'text')
    .addPrimaryKeyConstraint('mcp_tools_pkey', ['server_id', 'name'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mcp_tools').execute();
  await db.schema.dropTable('mcp_servers').execute();
}

import { type Kysely, sql } from 'kysely';

// Admin switches. Group state is keyed by group NAME, not by a registry row: a missing row means
// enabled, and a disabled group also covers tools installed later. A tool row overrides the tool's
// enabledByDefault but can never re-enable a tool inside a disabled group (enforced in access/).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tool_group_state')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('enabled', 'boolean', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('tool_state')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('enabled', 'boolean', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_state').execute();
  await db.schema.dropTable('tool_group_state').execute();
}

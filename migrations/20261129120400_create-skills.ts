import { type Kysely, sql } from 'kysely';

// Skills: prompt fragments that may declare the tools they need. `allowed_tools` NULL means the
// skill has no opinion; an empty JSON array means it allows no tools at all.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('skills')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('allowed_tools', 'jsonb')
    .addColumn('trust_level', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('skills').execute();
}

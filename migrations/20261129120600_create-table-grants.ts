import { type Kysely, sql } from 'kysely';

// Which tables of the operator's `records` schema a non-admin user may read (or write).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('table_grants')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('table_name', 'text', (col) => col.notNull())
    .addColumn('mode', 'text', (col) => col.notNull().defaultTo('READ').check(sql`mode in ('READ', 'WRITE')`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('table_grants_pk', ['user_id', 'table_name'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('table_grants').execute();
}

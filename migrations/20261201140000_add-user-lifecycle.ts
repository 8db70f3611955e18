import type { Kysely } from 'kysely';

// The token lifecycle: a user can be deactivated (their token is refused, their sessions end)
// without losing their history, and the time of the last token rotation is kept for operators.
// A rotated token leaves nothing behind: `token_hash` is replaced, never kept beside the new one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('token_rotated_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('token_rotated_at').dropColumn('active').execute();
}

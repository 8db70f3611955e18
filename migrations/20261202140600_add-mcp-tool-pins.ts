import { type Kysely, sql } from 'kysely';

// Imported tools are pinned: `description` and `input_schema` hold the definition an admin accepted
// (or the first import), `pinned_digest` its sha256. A refresh that lists a different definition
// stores it beside the pin as the pending one (description, schema, the reason it could not be
// offered, digest) until an admin accepts or rejects it. A null `pinned_digest` (a row stored
// before this migration) pins its stored definition; the next refresh writes the digest.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('mcp_tools')
    .addColumn('pinned_digest', 'text')
    .addColumn('pending_description', 'text')
    .addColumn('pending_input_schema', 'jsonb')
    .addColumn('pending_unavailable_reason', 'text')
    .addColumn('pending_digest', 'text')
    .execute();
  // A pending change is whole or absent.
  await db.schema
    .alterTable('mcp_tools')
    .addCheckConstraint(
      'mcp_tools_pending_whole',
      sql`(pending_digest is null) = (pending_description is null) and (pending_digest is null) = (pending_input_schema is null)`,
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mcp_tools').dropConstraint('mcp_tools_pending_whole').execute();
  await db.schema
    .alterTable('mcp_tools')
    .dropColumn('pending_digest')
    .dropColumn('pending_unavailable_reason')
    .dropColumn('pending_input_schema')
    .dropColumn('pending_description')
    .dropColumn('pinned_digest')
    .execute();
}

import type { Kysely } from 'kysely';

// When the client of an MCP session last sent a request (null until its first one after the
// handshake, and for agent runs): at AIRLOCK_MAX_MCP_SESSIONS_PER_USER the least recently used
// session of the user is closed, whichever instance holds it, so the order lives in the database.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('last_request_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('last_request_at').execute();
}

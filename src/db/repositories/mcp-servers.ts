import { sql } from 'kysely';
import { onlyUuids } from '../errors.ts';
import type { Db, McpServerRow, McpToolRow, NewMcpTool } from '../database.ts';

export interface NewMcpServer {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly headers_ciphertext: string | null;
}

export type ToolImport = Omit<NewMcpTool, 'server_id'>;

export async function listMcpServers(db: Db): Promise<McpServerRow[]> {
  return db.selectFrom('mcp_servers').selectAll().orderBy('name').execute();
}

export async function findMcpServersByIds(db: Db, ids: readonly string[]): Promise<McpServerRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('mcp_servers').selectAll().where('id', 'in', valid).execute();
}

export async function findMcpServerByName(db: Db, name: string): Promise<McpServerRow | undefined> {
  return db.selectFrom('mcp_servers').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Every stored tool of the given servers (all servers when `serverIds` is absent), in listing order. */
export async function listMcpTools(db: Db, serverIds?: readonly string[]): Promise<McpToolRow[]> {
  let query = db.selectFrom('mcp_tools').selectAll().orderBy('server_id').orderBy('position');
  if (serverIds !== undefined) {
    const valid = onlyUuids(serverIds);
    if (valid.length === 0) return [];
    query = query.where('server_id', 'in', valid);
  }
  return query.execute();
}

/** The server and its tools, in one transaction. */
export async function insertMcpServer(db: Db, server: NewMcpServer, tools: readonly ToolImport[]): Promise<McpServerRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('mcp_servers').values(server).returningAll().executeTakeFirstOrThrow();
    if (tools.length > 0) await trx.insertInto('mcp_tools').values(tools.map((tool) => ({ ...tool, server_id: row.id }))).execute();
    return row;
  });
}

export interface McpServerChanges {
  readonly name?: string;
  readonly url?: string;
  readonly headers_ciphertext?: string | null;
}

/**
 * Updates the server and, when `tools` is given, replaces its tools (a refresh), in one
 * transaction. Undefined when no such server exists.
 */
export async function updateMcpServer(
  db: Db,
  id: string,
  changes: McpServerChanges,
  tools?: readonly ToolImport[],
): Promise<McpServerRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('mcp_servers')
      .set({ ...changes, updated_at: sql`now()`, ...(tools ? { refreshed_at: sql`now()` } : {}) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row || !tools) return row;
    await trx.deleteFrom('mcp_tools').where('server_id', '=', id).execute();
    if (tools.length > 0) await trx.insertInto('mcp_tools').values(tools.map((tool) => ({ ...tool, server_id: id }))).execute();
    return row;
  });
}

export async function setMcpToolAdminOnly(db: Db, serverId: string, toolName: string, adminOnly: boolean): Promise<boolean> {
  const result = await db
    .updateTable('mcp_tools')
    .set({ admin_only: adminOnly })
    .where('server_id', '=', serverId)
    .where('name', '=', toolName)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findMcpTool(db: Db, serverId: string, toolName: string): Promise<McpToolRow | undefined> {
  if (onlyUuids([serverId]).length === 0) return undefined;
  return db.selectFrom('mcp_tools').selectAll().where('server_id', '=', serverId).where('name', '=', toolName).executeTakeFirst();
}

const NO_PENDING = { pending_description: null, pending_input_schema: null, pending_unavailable_reason: null, pending_digest: null } as const;

/**
 * Pins the pending definition of one tool (it becomes the offered one) and clears it, only while
 * the pending digest is still `pendingDigest`: a change listed after the admin looked is never
 * accepted in its place. False when nothing matched.
 */
export async function acceptPendingDefinition(db: Db, serverId: string, toolName: string, pendingDigest: string): Promise<boolean> {
  const result = await db
    .updateTable('mcp_tools')
    .set({
      description: sql<string>`pending_description`,
      input_schema: sql<string>`pending_input_schema`,
      unavailable_reason: sql<string | null>`pending_unavailable_reason`,
      pinned_digest: sql<string>`pending_digest`,
      ...NO_PENDING,
    })
    .where('server_id', '=', serverId)
    .where('name', '=', toolName)
    .where('pending_digest', '=', pendingDigest)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Drops the pending definition of one tool while its digest is still `pendingDigest`; the pin stays. */
export async function rejectPendingDefinition(db: Db, serverId: string, toolName: string, pendingDigest: string): Promise<boolean> {
  const result = await db
    .updateTable('mcp_tools')
    .set(NO_PENDING)
    .where('server_id', '=', serverId)
    .where('name', '=', toolName)
    .where('pending_digest', '=', pendingDigest)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes the server and (cascade) its tools; the name of the deleted server, or undefined. */
export async function deleteMcpServer(db: Db, id: string): Promise<string | undefined> {
  const row = await db.deleteFrom('mcp_servers').where('id', '=', id).returning('name').executeTakeFirst();
  return row?.name;
}

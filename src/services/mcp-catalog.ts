import { z } from 'zod';
import type { Db, McpServerRow, McpToolRow } from '../db/database.ts';
import * as mcpServers from '../db/repositories/mcp-servers.ts';
import type { SecretBox } from '../db/secret-box.ts';
import type { Logger, SecretScrubber } from '../logger.ts';
import { callRemoteTool, type RemoteServer } from '../remote-mcp/client.ts';
import { checkRemoteTool, mcpGroup, remoteTool } from '../remote-mcp/tools.ts';
import type { Broadcast } from '../runtime/broadcast.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/tool.ts';

/** "The imported tools of this server changed": every instance reloads them from the database. */
export const mcpCatalogChangeSchema = z.object({ server: z.string().min(1).max(200) });
export type McpCatalogChange = z.infer<typeof mcpCatalogChangeSchema>;

export interface McpCatalogDeps {
  readonly db: Db;
  readonly registry: ToolRegistry;
  readonly secrets: SecretBox;
  /** Called with every header value revealed, so the log scrubber masks it. */
  readonly onSecret: (value: string) => void;
  readonly logger: Logger;
  /** Connect + list, or connect + call, abandoned after this many milliseconds. */
  readonly timeoutMs: number;
  readonly catalog: Broadcast<McpCatalogChange>;
}

/**
 * What the catalogue's deps are made of: exactly the long-lived collaborators it uses, which the
 * app's services provide (named here so that no service depends on all of them).
 */
export interface McpCatalogSources {
  readonly db: Db;
  readonly registry: ToolRegistry;
  readonly secrets: SecretBox;
  readonly scrubber: Pick<SecretScrubber, 'add'>;
  readonly logger: Logger;
  readonly config: { readonly mcpCallTimeoutMs: number };
  readonly mcpCatalog: Broadcast<McpCatalogChange>;
}

export function mcpCatalogDeps(sources: McpCatalogSources): McpCatalogDeps {
  return {
    db: sources.db,
    registry: sources.registry,
    secrets: sources.secrets,
    onSecret: (value) => sources.scrubber.add(value),
    logger: sources.logger,
    timeoutMs: sources.config.mcpCallTimeoutMs,
    catalog: sources.mcpCatalog,
  };
}

/** The AAD that binds a server's sealed headers to its row. */
const headersContext = (serverId: string) => `mcp_server:${serverId}:headers`;

export function sealServerHeaders(deps: Pick<McpCatalogDeps, 'secrets' | 'onSecret'>, serverId: string, headers: Readonly<Record<string, string>>): string | null {
  if (Object.keys(headers).length === 0) return null;
  for (const value of Object.values(headers)) deps.onSecret(value);
  return deps.secrets.seal(JSON.stringify(headers), headersContext(serverId));
}

/** Decrypts a server's headers for a remote request; the values go to fetch and nowhere else. */
export function revealServerHeaders(deps: Pick<McpCatalogDeps, 'secrets' | 'onSecret'>, row: McpServerRow): Record<string, string> {
  if (row.headers_ciphertext === null) return {};
  const headers = JSON.parse(deps.secrets.open(row.headers_ciphertext, headersContext(row.id))) as Record<string, string>;
  for (const value of Object.values(headers)) deps.onSecret(value);
  return headers;
}

/** The names of a server's headers (what an admin may read back). */
export function serverHeaderNames(secrets: SecretBox, row: McpServerRow): string[] {
  if (row.headers_ciphertext === null) return [];
  return Object.keys(JSON.parse(secrets.open(row.headers_ciphertext, headersContext(row.id))) as object).sort();
}

export function remoteServerOf(deps: Pick<McpCatalogDeps, 'secrets' | 'onSecret'>, row: McpServerRow): RemoteServer {
  return { url: row.url, headers: revealServerHeaders(deps, row) };
}

/**
 * The registrable tools of one stored server: the available ones whose schema still checks, each
 * at its PINNED definition (a pending change is never offered; services/mcp-tool-pins.ts). Each
 * call reveals the headers afresh (they are not kept in memory in plaintext between calls).
 */
export function toolsOfServer(
  deps: McpCatalogDeps,
  row: McpServerRow,
  stored: readonly Pick<McpToolRow, 'name' | 'description' | 'input_schema' | 'admin_only' | 'unavailable_reason'>[],
): Tool[] {
  const call = (toolName: string, args: unknown, signal: AbortSignal) =>
    callRemoteTool(remoteServerOf(deps, row), toolName, args, { timeoutMs: deps.timeoutMs, signal });
  return stored.flatMap((tool) => {
    if (tool.unavailable_reason !== null) return [];
    const check = checkRemoteTool({ name: tool.name, description: tool.description, inputSchema: tool.input_schema });
    if (!check.ok) return [];
    return [remoteTool(row.name, { name: tool.name, description: tool.description, inputSchema: tool.input_schema, adminOnly: tool.admin_only }, check, call)];
  });
}

/**
 * Puts the stored tools of one server (by name) into this instance's registry, or removes them when
 * the server no longer exists. A collision with another source (a tool module installed since)
 * leaves the server's tools out and is logged: start-up and other instances never fail on it.
 */
export async function reloadServer(deps: McpCatalogDeps, serverName: string): Promise<void> {
  const row = await mcpServers.findMcpServerByName(deps.db, serverName);
  const tools = row ? toolsOfServer(deps, row, await mcpServers.listMcpTools(deps.db, [row.id])) : [];
  replaceLogged(deps, serverName, tools);
}

function replaceLogged(deps: McpCatalogDeps, serverName: string, tools: readonly Tool[]): void {
  try {
    deps.registry.replaceSource(mcpGroup(serverName), tools);
  } catch (error) {
    deps.registry.replaceSource(mcpGroup(serverName), []);
    deps.logger.error({ err: error, mcpServer: serverName }, 'the imported tools of an MCP server were left out of the catalogue');
  }
}

/** Start-up: every stored server's tools join the registry. */
export async function loadCatalog(deps: McpCatalogDeps): Promise<number> {
  const rows = await mcpServers.listMcpServers(deps.db);
  const tools = await mcpServers.listMcpTools(deps.db);
  for (const row of rows) replaceLogged(deps, row.name, toolsOfServer(deps, row, tools.filter((tool) => tool.server_id === row.id)));
  return rows.length;
}

/** Every instance (this one included) reloads a changed server from the database. */
export function followCatalogChanges(deps: McpCatalogDeps): () => void {
  return deps.catalog.subscribe(({ server }) => {
    reloadServer(deps, server).catch((error: unknown) => deps.logger.error({ err: error, mcpServer: server }, 'could not reload the imported tools of an MCP server'));
  });
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { McpServerRow } from '../db/database.ts';
import * as mcpServers from '../db/repositories/mcp-servers.ts';
import * as toolState from '../db/repositories/tool-state.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { ConflictError, McpServerUnreachableError, NotFoundError } from '../errors.ts';
import { listRemoteTools, RemoteMcpError, type RemoteServer, type RemoteToolListing } from '../remote-mcp/client.ts';
import { MAX_REMOTE_SCHEMA_BYTES } from '../remote-mcp/schema-check.ts';
import { MAX_REMOTE_DESCRIPTION_CHARS, mcpGroup, remoteToolProblem } from '../remote-mcp/tools.ts';
import { providerHeadersSchema } from '../providers/settings.ts';
import { ToolRegistryError } from '../tools/registry.ts';
import { remoteServerOf, sealServerHeaders, toolsOfServer, type McpCatalogDeps } from './mcp-catalog.ts';
import { holdChangedDefinitions } from './mcp-tool-pins.ts';
import { nullishShape, parseInput, requireId } from './validate.ts';

/** The server name becomes the tool group `mcp:<name>`. */
const name = z
  .string()
  .trim()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,39}$/, 'must be 1 to 40 letters, digits, "_" or "-", starting with a letter or digit');
const url = z
  .string()
  .trim()
  .max(2_000, 'must be at most 2000 characters')
  .refine((value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol), 'must be an http(s) URL')
  .refine((value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''), 'must not contain credentials; pass them in headers');
/** Header values are credentials: write-only, sealed; the SDK sets the MCP session headers itself. */
const headers = providerHeadersSchema.refine(
  (value) => !Object.keys(value).some((key) => key.toLowerCase().startsWith('mcp-')),
  'must not set mcp-* headers (the MCP client sets them)',
);

const createSchema = z.object({ name, url, headers: headers.nullish() });
const updateSchema = z.object(nullishShape({ name, url, headers }));

/**
 * What a listing becomes in storage: every listed tool (first 200), each with the reason it cannot
 * be offered, if any. The admin-only flag of a tool that was listed before is kept.
 */
function importsOf(listing: readonly RemoteToolListing[], adminOnly: ReadonlyMap<string, boolean>): mcpServers.ToolImport[] {
  // A name listed twice is imported once (its first listing).
  const unique = listing.filter((tool, index) => listing.findIndex((other) => other.name === tool.name) === index);
  return unique.map((tool, position) => {
    const schemaJson = JSON.stringify(tool.inputSchema ?? null);
    const tooLarge = Buffer.byteLength(schemaJson, 'utf8') > MAX_REMOTE_SCHEMA_BYTES;
    // Name, schema (bounded validation work, no control token where it validates) and the whole
    // definition as offered to the model within MAX_REMOTE_DEFINITION_BYTES (remote-mcp/tools.ts).
    const reason = tooLarge ? `the input schema exceeds ${MAX_REMOTE_SCHEMA_BYTES} bytes` : remoteToolProblem(tool);
    return {
      name: tool.name.slice(0, 200),
      position,
      description: tool.description.slice(0, MAX_REMOTE_DESCRIPTION_CHARS),
      input_schema: tooLarge ? '{}' : schemaJson,
      admin_only: adminOnly.get(tool.name) ?? false,
      unavailable_reason: reason,
    };
  });
}

/** Refused before anything touches the registry: the group `mcp:<name>` belongs to one server. */
async function requireFreeName(deps: McpCatalogDeps, serverName: string): Promise<void> {
  if (await mcpServers.findMcpServerByName(deps.db, serverName)) throw new ConflictError(`An MCP server named "${serverName}" already exists.`);
}

async function listOrRefuse(deps: McpCatalogDeps, serverName: string, server: RemoteServer): Promise<RemoteToolListing[]> {
  try {
    return await listRemoteTools(server, { timeoutMs: deps.timeoutMs });
  } catch (error) {
    const kind = error instanceof RemoteMcpError ? error.kind : 'unexpected';
    deps.logger.warn({ err: error, mcpServer: serverName, kind }, 'could not list the tools of an MCP server');
    throw new McpServerUnreachableError(serverName);
  }
}

/**
 * Stores the server and its tools, then puts them into this instance's registry and tells the other
 * instances. A name that collides with any other tool refuses the whole change (ConflictError,
 * naming the tool and its owner); nothing is stored then.
 */
async function importInto(
  deps: McpCatalogDeps,
  previousName: string | null,
  draft: McpServerRow,
  imports: mcpServers.ToolImport[],
  write: () => Promise<McpServerRow | undefined>,
): Promise<McpServerRow> {
  const others = (await mcpServers.listMcpTools(deps.db)).filter((tool) => tool.server_id !== draft.id);
  const clash = imports.find((tool) => others.some((other) => other.name === tool.name));
  if (clash) throw new ConflictError(`The tool "${clash.name}" of MCP server "${draft.name}" collides with a tool of the same name imported from another MCP server; rename or remove one of them.`);
  const tools = toolsOfServer(deps, draft, imports.map((tool) => ({ ...tool, server_id: draft.id, admin_only: tool.admin_only ?? false, unavailable_reason: tool.unavailable_reason ?? null, input_schema: JSON.parse(tool.input_schema) as unknown })));
  // An imported tool's group is its source: `mcp:<name>`. A rename moves the tools to the new source.
  const source = mcpGroup(draft.name);
  const renamedFrom = previousName !== null && previousName !== draft.name ? mcpGroup(previousName) : null;
  const toolsOf = (group: string | null) => (group === null ? [] : deps.registry.all().filter((tool) => tool.group === group));
  const before = toolsOf(source);
  const beforeRename = toolsOf(renamedFrom);
  const restore = () => {
    deps.registry.replaceSource(source, before);
    if (renamedFrom !== null) deps.registry.replaceSource(renamedFrom, beforeRename);
  };
  try {
    if (renamedFrom !== null) deps.registry.replaceSource(renamedFrom, []);
    deps.registry.replaceSource(source, tools);
  } catch (error) {
    restore();
    if (error instanceof ToolRegistryError) throw new ConflictError(`MCP server "${draft.name}" cannot be imported: ${error.message}`);
    throw error;
  }
  let row: McpServerRow | undefined;
  try {
    row = await write();
  } catch (error) {
    restore();
    if (isUniqueViolation(error)) throw new ConflictError(`An MCP server named "${draft.name}" already exists, or one of its tool names is already imported.`);
    throw error;
  }
  if (!row) {
    restore();
    throw new NotFoundError('McpServer', draft.id);
  }
  if (previousName !== null && previousName !== draft.name) deps.catalog.publish({ server: previousName });
  deps.catalog.publish({ server: draft.name });
  return row;
}

export async function createMcpServer(deps: McpCatalogDeps, input: unknown): Promise<McpServerRow> {
  const data = parseInput(createSchema, input);
  await requireFreeName(deps, data.name);
  const id = randomUUID();
  const server = { url: data.url, headers: data.headers ?? {} };
  for (const value of Object.values(server.headers)) deps.onSecret(value);
  const imports = holdChangedDefinitions(deps, data.name, importsOf(await listOrRefuse(deps, data.name, server), new Map()), []);
  const headersCiphertext = sealServerHeaders(deps, id, server.headers);
  const draft: McpServerRow = { id, name: data.name, url: data.url, headers_ciphertext: headersCiphertext, refreshed_at: new Date(), created_at: new Date(), updated_at: new Date() };
  return importInto(deps, null, draft, imports, () => mcpServers.insertMcpServer(deps.db, { id, name: data.name, url: data.url, headers_ciphertext: headersCiphertext }, imports));
}

async function requireServer(deps: McpCatalogDeps, id: string): Promise<McpServerRow> {
  requireId('McpServer', id);
  const [row] = await mcpServers.findMcpServersByIds(deps.db, [id]);
  if (!row) throw new NotFoundError('McpServer', id);
  return row;
}

/** Changes name, URL or headers (`{}` removes them; absent leaves them) and lists the tools again. */
export async function updateMcpServer(deps: McpCatalogDeps, id: string, input: unknown): Promise<McpServerRow> {
  const data = parseInput(updateSchema, input);
  const current = await requireServer(deps, id);
  if (data.name != null && data.name !== current.name) await requireFreeName(deps, data.name);
  const changes: mcpServers.McpServerChanges = {
    ...(data.name != null ? { name: data.name } : {}),
    ...(data.url != null ? { url: data.url } : {}),
    ...(data.headers != null ? { headers_ciphertext: sealServerHeaders(deps, id, data.headers) } : {}),
  };
  return refreshWith(deps, current, { ...current, ...changes });
}

/**
 * Lists the remote's tools again: new ones arrive disabled, vanished ones leave the catalogue, a
 * changed one stays at its pinned definition with the change pending (mcp-tool-pins.ts).
 */
export async function refreshMcpServer(deps: McpCatalogDeps, id: string): Promise<McpServerRow> {
  const current = await requireServer(deps, id);
  return refreshWith(deps, current, current);
}

async function refreshWith(deps: McpCatalogDeps, current: McpServerRow, next: McpServerRow): Promise<McpServerRow> {
  const stored = await mcpServers.listMcpTools(deps.db, [current.id]);
  const adminOnly = new Map(stored.map((tool) => [tool.name, tool.admin_only]));
  // A changed definition is held back at the tool's pin until an admin accepts it (mcp-tool-pins.ts).
  const imports = holdChangedDefinitions(deps, next.name, importsOf(await listOrRefuse(deps, next.name, remoteServerOf(deps, next)), adminOnly), stored);
  const { name: nextName, url: nextUrl, headers_ciphertext } = next;
  const row = await importInto(deps, current.name, next, imports, () =>
    mcpServers.updateMcpServer(deps.db, current.id, { name: nextName, url: nextUrl, headers_ciphertext }, imports),
  );
  const listed = new Set(imports.map((tool) => tool.name));
  await forgetSwitches(deps, [...adminOnly.keys()].filter((name) => !listed.has(name)));
  return row;
}

/**
 * A tool that left the catalogue loses its admin switch: should a tool of that name be imported
 * again (from this server or another), it arrives disabled like any new import.
 */
async function forgetSwitches(deps: McpCatalogDeps, toolNames: readonly string[]): Promise<void> {
  for (const name of toolNames) await toolState.deleteToolState(deps.db, name);
}

/** Marks one imported tool admin-only (or not); kept across refreshes while the remote lists it. */
export async function setMcpToolAdminOnly(deps: McpCatalogDeps, id: string, toolName: string, adminOnly: boolean): Promise<McpServerRow> {
  const row = await requireServer(deps, id);
  if (!(await mcpServers.setMcpToolAdminOnly(deps.db, id, toolName, adminOnly))) throw new NotFoundError('McpTool', toolName);
  const tools = toolsOfServer(deps, row, await mcpServers.listMcpTools(deps.db, [id]));
  deps.registry.replaceSource(mcpGroup(row.name), tools);
  deps.catalog.publish({ server: row.name });
  return row;
}

export async function deleteMcpServer(deps: McpCatalogDeps, id: string): Promise<string> {
  requireId('McpServer', id);
  const tools = await mcpServers.listMcpTools(deps.db, [id]);
  const removed = await mcpServers.deleteMcpServer(deps.db, id);
  if (removed === undefined) throw new NotFoundError('McpServer', id);
  await forgetSwitches(deps, tools.map((tool) => tool.name));
  deps.registry.replaceSource(mcpGroup(removed), []);
  deps.catalog.publish({ server: removed });
  return id;
}

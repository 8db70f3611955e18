import type { McpServerRow, McpToolRow } from '../db/database.ts';
import * as mcpServers from '../db/repositories/mcp-servers.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { definitionDigest } from '../remote-mcp/definition-digest.ts';
import type { Actor } from '../tools/tool.ts';
import { reloadServer, type McpCatalogDeps } from './mcp-catalog.ts';
import { requireId } from './validate.ts';

/**
 * The supply-chain rule of imported tools: a tool is pinned at its definition (name, description,
 * input schema; see remote-mcp/definition-digest.ts) when it is first imported and whenever an admin
 * accepts a change. A refresh that lists a different definition keeps the PINNED one stored and
 * offered (with its availability) and holds the new one as pending, until an admin accepts it
 * (it becomes the pin and is offered) or rejects it (dropped; a later refresh listing it again
 * shows it pending again). Enabling a tool (setToolEnabled) enables its pinned definition, the one
 * `McpTool.description` / `inputSchema` show. A refresh that read the pins before an admin's
 * decision and writes after it stores the change as pending again: a race can undo a decision,
 * never offer a definition nobody accepted.
 */

/** The digest of a stored tool's pinned definition (rows stored before pinning carry none yet). */
export function pinnedDigestOf(row: Pick<McpToolRow, 'name' | 'description' | 'input_schema' | 'pinned_digest'>): string {
  return row.pinned_digest ?? definitionDigest({ name: row.name, description: row.description, inputSchema: row.input_schema });
}

/**
 * What a listing stores once the pins are applied: a new tool (or one whose definition did not
 * change) is pinned as listed; a changed one keeps its stored pin and carries the listed
 * definition as pending. `stored` = the server's tools before this listing. Every held change is
 * logged (the remote's text is not: it is outside input).
 */
export function holdChangedDefinitions(deps: Pick<McpCatalogDeps, 'logger'>, serverName: string, listed: readonly mcpServers.ToolImport[], stored: readonly McpToolRow[]): mcpServers.ToolImport[] {
  const pins = new Map(stored.map((row) => [row.name, row]));
  return listed.map((tool) => {
    const digest = definitionDigest({ name: tool.name, description: tool.description, inputSchema: JSON.parse(tool.input_schema) as unknown });
    const pinned = pins.get(tool.name);
    const pinnedDigest = pinned ? pinnedDigestOf(pinned) : digest;
    if (!pinned || pinnedDigest === digest) {
      return { ...tool, pinned_digest: digest, pending_description: null, pending_input_schema: null, pending_unavailable_reason: null, pending_digest: null };
    }
    if (pinned.pending_digest !== digest) {
      deps.logger.warn({ mcpServer: serverName, tool: tool.name, pinnedDigest, pendingDigest: digest }, 'an MCP server changed the definition of an imported tool; the pinned one stays until an admin accepts the change');
    }
    return {
      ...tool,
      description: pinned.description,
      input_schema: JSON.stringify(pinned.input_schema),
      unavailable_reason: pinned.unavailable_reason,
      pinned_digest: pinnedDigest,
      pending_description: tool.description,
      pending_input_schema: tool.input_schema,
      pending_unavailable_reason: tool.unavailable_reason ?? null,
      pending_digest: digest,
    };
  });
}

/** One side of a pending change, as an admin reviews it. */
export interface McpToolDefinitionView {
  readonly description: string;
  readonly inputSchema: unknown;
  readonly digest: string;
  /** Why this definition cannot be offered at all; null when it can. */
  readonly unavailableReason: string | null;
}

export interface McpToolChangeView {
  readonly old: McpToolDefinitionView;
  readonly new: McpToolDefinitionView;
}

/** The change of a stored tool waiting for an admin, or null. */
export function pendingChangeOf(row: McpToolRow): McpToolChangeView | null {
  if (row.pending_digest === null || row.pending_description === null) return null;
  return {
    old: { description: row.description, inputSchema: row.input_schema, digest: pinnedDigestOf(row), unavailableReason: row.unavailable_reason },
    new: { description: row.pending_description, inputSchema: row.pending_input_schema, digest: row.pending_digest, unavailableReason: row.pending_unavailable_reason },
  };
}

export type McpToolDecision = 'accept' | 'reject';

/**
 * An admin accepts (the pending definition becomes the pin and is offered on every instance) or
 * rejects (the pin stays, the pending one is dropped) the changed definition of one imported tool.
 * `digest`, when given, must be the pending definition's: a change listed after the admin looked
 * is refused (ConflictError), never decided unseen. Audited: one log line naming the admin, the
 * server, the tool and both digests.
 */
export async function decideMcpToolChange(
  deps: McpCatalogDeps,
  admin: Actor,
  serverId: string,
  toolName: string,
  decision: McpToolDecision,
  digest?: string | null,
): Promise<McpServerRow> {
  requireId('McpServer', serverId);
  const [server] = await mcpServers.findMcpServersByIds(deps.db, [serverId]);
  if (!server) throw new NotFoundError('McpServer', serverId);
  const tool = await mcpServers.findMcpTool(deps.db, serverId, toolName);
  if (!tool) throw new NotFoundError('McpTool', toolName);
  const shownName = JSON.stringify(tool.name.slice(0, 100));
  if (tool.pending_digest === null) throw new ConflictError(`The tool ${shownName} has no pending definition change.`);
  if (digest != null && digest !== tool.pending_digest) {
    throw new ConflictError(`The pending definition of tool ${shownName} is no longer the one named by this digest; look at its pendingChange again.`);
  }
  const decided =
    decision === 'accept'
      ? await mcpServers.acceptPendingDefinition(deps.db, serverId, tool.name, tool.pending_digest)
      : await mcpServers.rejectPendingDefinition(deps.db, serverId, tool.name, tool.pending_digest);
  if (!decided) throw new ConflictError(`The pending definition of tool ${shownName} changed meanwhile; look at its pendingChange again.`);
  deps.logger.info(
    {
      audit: decision === 'accept' ? 'mcpToolChangeAccepted' : 'mcpToolChangeRejected',
      adminId: admin.id,
      mcpServerId: server.id,
      mcpServer: server.name,
      tool: tool.name,
      pinnedDigest: pinnedDigestOf(tool),
      pendingDigest: tool.pending_digest,
    },
    decision === 'accept' ? 'an admin accepted the changed definition of an imported MCP tool' : 'an admin rejected the changed definition of an imported MCP tool',
  );
  if (decision === 'accept') {
    // This instance at once (the answer shows it); every other one through the broadcast.
    await reloadServer(deps, server.name);
    deps.catalog.publish({ server: server.name });
  }
  return server;
}

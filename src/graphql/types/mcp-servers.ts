import { encodeGlobalId } from '../../global-id.ts';
import type { McpServerRow, McpToolRow } from '../../db/database.ts';
import { findMcpServersByIds, listMcpServers, listMcpTools } from '../../db/repositories/mcp-servers.ts';
import { ConflictError, McpServerUnreachableError, NotFoundError, ValidationError } from '../../errors.ts';
import { mcpGroup } from '../../remote-mcp/tools.ts';
import { serverHeaderNames } from '../../services/mcp-catalog.ts';
import * as mcp from '../../services/mcp-servers.ts';
import { decideMcpToolChange, pendingChangeOf, pinnedDigestOf, type McpToolChangeView, type McpToolDefinitionView } from '../../services/mcp-tool-pins.ts';
import { builder } from '../builder.ts';
import { DeletedRef } from './root.ts';

const McpToolDefinitionRef = builder.objectRef<McpToolDefinitionView>('McpToolDefinition').implement({
  description: "One definition of an imported tool, as the remote listed it (untrusted text).",
  fields: (t) => ({
    description: t.exposeString('description'),
    inputSchema: t.field({ type: 'JSON', resolve: (definition) => definition.inputSchema }),
    digest: t.exposeString('digest', { description: 'sha256 (hex) of name, description and input schema as canonical JSON.' }),
    unavailableReason: t.exposeString('unavailableReason', { nullable: true, description: 'Why this definition cannot be offered at all; null when it can.' }),
  }),
});

const McpToolChangeRef = builder.objectRef<McpToolChangeView>('McpToolChange').implement({
  description: 'A definition the remote listed that differs from the pinned one: held back until an admin accepts it (acceptMcpToolChange) or rejects it (rejectMcpToolChange).',
  fields: (t) => ({
    old: t.field({ type: McpToolDefinitionRef, description: 'The pinned definition: the one offered.', resolve: (change) => change.old }),
    new: t.field({ type: McpToolDefinitionRef, description: 'The definition the remote listed at its last refresh: never offered before it is accepted.', resolve: (change) => change.new }),
  }),
});

const McpToolRef = builder.objectRef<McpToolRow>('McpTool').implement({
  description:
    'A tool the remote server listed at its last refresh, at its PINNED definition (the one offered; pinned at first import and whenever an admin accepts a change). ' +
    'Switch it on with setToolEnabled (imported tools start disabled).',
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description', { description: "The pinned definition's text: the remote's own (untrusted; neutralised and capped before a model sees it)." }),
    inputSchema: t.field({ type: 'JSON', description: "The pinned definition's input schema.", resolve: (tool) => tool.input_schema }),
    pinnedDigest: t.string({ description: 'sha256 (hex) of the pinned definition (name, description, input schema as canonical JSON).', resolve: (tool) => pinnedDigestOf(tool) }),
    pendingChange: t.field({
      type: McpToolChangeRef,
      nullable: true,
      description: 'The changed definition the remote listed since the pin, beside the pinned one; null when there is none.',
      resolve: (tool) => pendingChangeOf(tool),
    }),
    adminOnly: t.exposeBoolean('admin_only', { description: 'Only admins may use it (setMcpToolAdminOnly); kept across refreshes.' }),
    available: t.boolean({
      description: 'False when the tool cannot be offered at all (see unavailableReason); the rest of the server is unaffected.',
      resolve: (tool) => tool.unavailable_reason === null,
    }),
    unavailableReason: t.exposeString('unavailable_reason', { nullable: true }),
  }),
});

/** Imported MCP servers are admin-only: their URLs and headers describe the operator's infrastructure. */
export const McpServerRef = builder.loadableNode('McpServer', {
  id: { resolve: (server: McpServerRow) => server.id },
  load: (ids: string[], context) => findMcpServersByIds(context.db, ids),
  sort: (server) => server.id,
  authScopes: { admin: true },
  fields: (t) => ({
    name: t.exposeString('name'),
    url: t.exposeString('url'),
    group: t.string({ description: 'The tool group of its tools: `mcp:<name>`.', resolve: (server) => mcpGroup(server.name) }),
    headerNames: t.stringList({
      description: 'Names of the request headers sent to the server. Their values are sealed and never readable.',
      resolve: (server, _args, context) => serverHeaderNames(context.secrets, server),
    }),
    tools: t.field({ type: [McpToolRef], resolve: (server, _args, context) => listMcpTools(context.db, [server.id]) }),
    refreshedAt: t.field({ type: 'DateTime', resolve: (server) => server.refreshed_at }),
    createdAt: t.field({ type: 'DateTime', resolve: (server) => server.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (server) => server.updated_at }),
  }),
});

const CreateMcpServerInput = builder.inputType('CreateMcpServerInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its tools form the group `mcp:<name>`.' }),
    url: t.string({ required: true, description: 'The Streamable HTTP endpoint, http(s), without credentials.' }),
    headers: t.field({ type: 'JSON', description: 'Request headers (an object of strings), e.g. an Authorization token. Write-only: stored encrypted.' }),
  }),
});

const UpdateMcpServerInput = builder.inputType('UpdateMcpServerInput', {
  fields: (t) => ({
    name: t.string(),
    url: t.string(),
    headers: t.field({ type: 'JSON', description: 'Replaces the stored headers (`{}` removes them); absent leaves them.' }),
  }),
});

const errors = { types: [ValidationError, NotFoundError, ConflictError, McpServerUnreachableError] };

builder.queryFields((t) => ({
  mcpServers: t.field({
    type: [McpServerRef],
    authScopes: { admin: true },
    resolve: (_root, _args, context) => listMcpServers(context.db),
  }),
}));

builder.mutationFields((t) => ({
  createMcpServer: t.field({
    type: McpServerRef,
    authScopes: { admin: true },
    description: 'Imports the tools of a remote MCP server (Streamable HTTP) as group `mcp:<name>`, each disabled until an admin enables it.',
    errors,
    args: { input: t.arg({ type: CreateMcpServerInput, required: true }) },
    resolve: (_root, { input }, context) => mcp.createMcpServer(context.mcpCatalog, input),
  }),
  updateMcpServer: t.field({
    type: McpServerRef,
    authScopes: { admin: true },
    description: 'Changes the server and lists its tools again.',
    errors,
    args: {
      id: t.arg.globalID({ required: true, for: [McpServerRef] }),
      input: t.arg({ type: UpdateMcpServerInput, required: true }),
    },
    resolve: (_root, { id, input }, context) => mcp.updateMcpServer(context.mcpCatalog, id.id, input),
  }),
  refreshMcpServer: t.field({
    type: McpServerRef,
    authScopes: { admin: true },
    description: 'Lists the remote tools again: new tools arrive disabled, vanished ones leave the catalogue; a name that collides with another tool refuses the refresh.',
    errors,
    args: { id: t.arg.globalID({ required: true, for: [McpServerRef] }) },
    resolve: (_root, { id }, context) => mcp.refreshMcpServer(context.mcpCatalog, id.id),
  }),
  setMcpToolAdminOnly: t.field({
    type: McpServerRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError] },
    args: {
      serverId: t.arg.globalID({ required: true, for: [McpServerRef] }),
      toolName: t.arg.string({ required: true }),
      adminOnly: t.arg.boolean({ required: true }),
    },
    resolve: (_root, { serverId, toolName, adminOnly }, context) =>
      mcp.setMcpToolAdminOnly(context.mcpCatalog, serverId.id, toolName, adminOnly),
  }),
  acceptMcpToolChange: toolChangeDecision(t, 'accept', "Pins the tool's pending definition: every instance offers it from now on. Audited."),
  rejectMcpToolChange: toolChangeDecision(
    t,
    'reject',
    'Drops the pending definition and keeps the pinned one (a later refresh listing the same change shows it pending again). Audited.',
  ),
  deleteMcpServer: t.field({
    type: DeletedRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError] },
    args: { id: t.arg.globalID({ required: true, for: [McpServerRef] }) },
    resolve: async (_root, { id }, context) => ({
      id: encodeGlobalId('McpServer', await mcp.deleteMcpServer(context.mcpCatalog, id.id)),
    }),
  }),
}));

/** acceptMcpToolChange and rejectMcpToolChange: the same arguments, one decision each. */
function toolChangeDecision(t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0], decision: 'accept' | 'reject', description: string) {
  return t.field({
    type: McpServerRef,
    authScopes: { admin: true },
    description,
    errors: { types: [NotFoundError, ConflictError] },
    args: {
      serverId: t.arg.globalID({ required: true, for: [McpServerRef] }),
      toolName: t.arg.string({ required: true }),
      digest: t.arg.string({ description: "The pending definition's digest as the admin saw it; when given, a different pending change is refused (ConflictError)." }),
    },
    resolve: (_root, { serverId, toolName, digest }, context) =>
      decideMcpToolChange(context.mcpCatalog, context.viewer!, serverId.id, toolName, decision, digest),
  });
}

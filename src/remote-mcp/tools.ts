import { isValidToolName } from '../tools/registry.ts';
import { ToolResult } from '../tools/result.ts';
import type { Tool } from '../tools/tool.ts';
import type { RemoteCallResult } from './client.ts';
import { checkRemoteSchema, MAX_REMOTE_DEFINITION_BYTES, type SchemaCheck } from './schema-check.ts';
import { neutraliseRemoteText } from './schema-offering.ts';

/**
 * An imported MCP tool adapted to the tool contract: checked as a whole (name, schema, the definition
 * offered to the model) and wrapped as an untrusted `Tool` that calls the remote.
 */

/** The group of an imported server's tools. */
export const mcpGroup = (serverName: string) => `mcp:${serverName}`;

/** A remote description is model-facing text from outside: neutralised and capped. */
export const MAX_REMOTE_DESCRIPTION_CHARS = 1_000;

/** One imported tool as stored: what the remote listed, checked, plus the admin's flag. */
export interface ImportedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly adminOnly: boolean;
}

/** Calls the remote tool (the service supplies the server's address and revealed headers). */
export type RemoteCaller = (toolName: string, args: unknown, signal: AbortSignal) => Promise<RemoteCallResult>;

export function describeRemoteTool(description: string): string {
  return neutraliseRemoteText(description.slice(0, MAX_REMOTE_DESCRIPTION_CHARS));
}

/**
 * One listed tool checked as a whole: its name, its schema (checkRemoteSchema) and its definition as
 * offered to the model — name, description and schema JSON — within MAX_REMOTE_DEFINITION_BYTES.
 * Used when a listing is stored and again when stored tools are loaded (rows stored before a rule).
 */
export function checkRemoteTool(tool: { readonly name: string; readonly description: string; readonly inputSchema: unknown }): SchemaCheck {
  if (!acceptableToolName(tool.name)) return { ok: false, reason: 'the name is not one LLM providers accept ([a-zA-Z][a-zA-Z0-9_-]{0,63})' };
  const check = checkRemoteSchema(tool.inputSchema);
  if (!check.ok) return check;
  const bytes = Buffer.byteLength(tool.name, 'utf8') + Buffer.byteLength(describeRemoteTool(tool.description), 'utf8') + Buffer.byteLength(JSON.stringify(check.schema), 'utf8');
  if (bytes > MAX_REMOTE_DEFINITION_BYTES) {
    return { ok: false, reason: `the tool's definition as offered to the model (name, description and input schema) is ${bytes} bytes, over the ${MAX_REMOTE_DEFINITION_BYTES}-byte limit` };
  }
  return check;
}

/** The reason a listed tool cannot be offered, or null (checkRemoteTool). */
export function remoteToolProblem(tool: { readonly name: string; readonly description: string; readonly inputSchema: unknown }): string | null {
  const check = checkRemoteTool(tool);
  return check.ok ? null : check.reason;
}

/**
 * An imported tool as a `Tool`: group `mcp:<server>`, off by default, its output untrusted (always
 * quarantined, counted against the run's remote-call budget). A remote error answer is an error
 * result whose text the model sees inside the quarantine envelope; a failed call throws, and the
 * seam answers `Error: tool "X" failed.` while the reason goes to the log.
 */
export function remoteTool(serverName: string, imported: ImportedTool, check: Extract<SchemaCheck, { ok: true }>, call: RemoteCaller): Tool {
  return {
    name: imported.name,
    description: describeRemoteTool(imported.description),
    group: mcpGroup(serverName),
    parameters: check.parameters,
    inputSchema: check.schema,
    enabledByDefault: false,
    requiresAdmin: imported.adminOnly,
    untrusted: true,
    async execute(args, ctx) {
      const answer = await call(imported.name, args, ctx.signal);
      return answer.isError ? ToolResult.error(answer.text) : ToolResult.text(answer.text);
    },
  };
}

/** Whether a listed name can be registered at all (providers reject other names). */
export function acceptableToolName(name: string): boolean {
  return isValidToolName(name);
}

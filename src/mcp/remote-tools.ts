import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { isValidToolName } from '../tools/registry.ts';
import { ToolResult } from '../tools/result.ts';
import { neutraliseControlTokens } from '../tools/sanitize.ts';
import type { Tool } from '../tools/tool.ts';
import type { RemoteCallResult } from './remote-client.ts';

/** The group of an imported server's tools. */
export const mcpGroup = (serverName: string) => `mcp:${serverName}`;

/** A remote description is model-facing text from outside: neutralised and capped. */
export const MAX_REMOTE_DESCRIPTION_CHARS = 1_000;
/** A remote input schema larger than this (as JSON) makes its tool unavailable. */
export const MAX_REMOTE_SCHEMA_BYTES = 64 * 1024;

/** One imported tool as stored: what the remote listed, checked, plus the admin's flag. */
export interface ImportedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly adminOnly: boolean;
}

/** Calls the remote tool (the service supplies the server's address and revealed headers). */
export type RemoteCaller = (toolName: string, args: unknown, signal: AbortSignal) => Promise<RemoteCallResult>;

export type SchemaCheck =
  | { readonly ok: true; readonly schema: Record<string, unknown>; readonly parameters: z.ZodType<Record<string, unknown>> }
  | { readonly ok: false; readonly reason: string };

// One validator for every remote schema: meta-schema checked (an invalid schema is refused, not
// half-applied), JSON Schema 2020-12 as MCP specifies, no remote `$ref`s fetched, formats not enforced.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: true, validateFormats: false, addUsedSchema: false });

export function describeRemoteTool(description: string): string {
  return neutraliseControlTokens(description.slice(0, MAX_REMOTE_DESCRIPTION_CHARS));
}

/**
 * Checks a remote input schema and builds the `parameters` that validate against it. An object
 * schema (`type: "object"` at the root, as MCP requires) that Ajv accepts, within the size cap;
 * anything else makes THIS tool unavailable with the returned reason (shown to admins).
 */
export function checkRemoteSchema(schema: unknown): SchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, reason: 'the input schema is not a JSON object' };
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  if (rest.type !== 'object') return { ok: false, reason: 'the input schema does not have type "object" at its root' };
  if (Buffer.byteLength(JSON.stringify(rest), 'utf8') > MAX_REMOTE_SCHEMA_BYTES) {
    return { ok: false, reason: `the input schema exceeds ${MAX_REMOTE_SCHEMA_BYTES} bytes` };
  }
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(rest);
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 300) : 'unknown error';
    return { ok: false, reason: `the input schema is not valid JSON Schema (${detail})` };
  }
  const parameters = z.unknown().superRefine((value, context) => {
    if (validate(value)) return;
    for (const issue of (validate.errors ?? []).slice(0, 20)) context.addIssue(toZodIssue(issue));
  }) as unknown as z.ZodType<Record<string, unknown>>;
  return { ok: true, schema: rest, parameters };
}

/**
 * Ajv's errors as zod issues, so the seam's value-free `invalidArgumentsError` renders them: paths
 * and schema-declared facts only (types, keys, enum options), never the received values.
 */
function toZodIssue(error: ErrorObject) {
  const path = error.instancePath.split('/').slice(1).map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return { code: 'invalid_type' as const, expected: String(params.type) as 'string', path, input: undefined };
    case 'required':
      return { code: 'invalid_type' as const, expected: 'nonoptional' as const, path: [...path, String(params.missingProperty)], input: undefined };
    case 'additionalProperties':
      return { code: 'unrecognized_keys' as const, keys: [String(params.additionalProperty)], path, input: undefined };
    case 'enum':
      return { code: 'invalid_value' as const, values: Array.isArray(params.allowedValues) ? (params.allowedValues as never[]) : [], path, input: undefined };
    default:
      return { code: 'custom' as const, path, input: undefined };
  }
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

import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { RegExpLike } from 'ajv/dist/types/index.js';
import { z } from 'zod';
import { offeringOf } from './schema-offering.ts';
import { oversizedArguments, PatternCompiler, validationCostOf } from './validation-cost.ts';

/**
 * A remote input schema checked once and compiled into the `parameters` that validate a call's
 * arguments: JSON Schema 2020-12 on Ajv, patterns on RE2, the validation work bounded
 * (validation-cost.ts) and the copy offered to the model neutralised (schema-offering.ts).
 */

/** A remote input schema larger than this (as JSON) is not even stored: its tool is unavailable. */
export const MAX_REMOTE_SCHEMA_BYTES = 64 * 1024;
/**
 * A remote tool's whole definition as offered to the model (name, description, input schema JSON;
 * UTF-8 bytes). Beyond it the tool is unavailable with its reason; nothing is cut silently.
 */
export const MAX_REMOTE_DEFINITION_BYTES = 8 * 1024;

export type SchemaCheck =
  | {
      readonly ok: true;
      /** The schema as offered to the model: its free text neutralised (validation uses the original). */
      readonly schema: Record<string, unknown>;
      readonly parameters: z.ZodType<Record<string, unknown>>;
    }
  | { readonly ok: false; readonly reason: string };

// Ajv compiles synchronously: the engine below borrows the compiler of the check under way.
let activeCompiler: PatternCompiler | null = null;

/** Ajv's `code.regExp`: every `pattern` and `patternProperties` key runs on RE2, never on a backtracking RegExp. */
const linearRegExp = Object.assign(
  (pattern: string): RegExpLike => {
    // A pattern the cost walk never reached (an unreferenced definition, which never runs) is compiled, not charged.
    const compiled = (activeCompiler ?? new PatternCompiler()).compiled(pattern);
    return { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` } as RegExpLike;
  },
  { code: 'linearRegExp' },
);

// One validator for every remote schema: meta-schema checked (an invalid schema is refused, not
// half-applied), JSON Schema 2020-12 as MCP specifies, no remote `$ref`s fetched, formats not
// enforced (they are annotations here, so no format regular expression ever runs), patterns on RE2.
const ajv = new Ajv2020({
  strict: false,
  allErrors: true,
  validateSchema: true,
  validateFormats: false,
  addUsedSchema: false,
  code: { regExp: linearRegExp },
});
// Ajv's own `uniqueItems` compares items pairwise (quadratic in the array's length); this one sorts
// nothing and compares nothing pairwise: one canonical JSON text per item, one Set.
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: false, validate: (unique: boolean, items: unknown[]) => !unique || allDistinct(items) });

/** Whether no two items are equal as JSON Schema compares them (object key order does not count). */
function allDistinct(items: readonly unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const canonical = JSON.stringify(item, (_key, value: unknown) =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : value,
    );
    if (seen.has(canonical)) return false;
    seen.add(canonical);
  }
  return true;
}

/**
 * Checks a remote input schema and builds the `parameters` that validate against it. An object
 * schema (`type: "object"` at the root, as MCP requires) that Ajv accepts, within the size cap, whose
 * validation work is bounded (see validationCostOf; each call's arguments are measured against it
 * before validating) and whose validating strings carry no
 * control token; anything else makes THIS tool unavailable with the returned reason (shown to admins).
 * The schema returned is the copy offered to the model; `parameters` validate against the original.
 */
export function checkRemoteSchema(schema: unknown): SchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, reason: 'the input schema is not a JSON object' };
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  if (rest.type !== 'object') return { ok: false, reason: 'the input schema does not have type "object" at its root' };
  if (Buffer.byteLength(JSON.stringify(rest), 'utf8') > MAX_REMOTE_SCHEMA_BYTES) {
    return { ok: false, reason: `the input schema exceeds ${MAX_REMOTE_SCHEMA_BYTES} bytes` };
  }
  const offering = offeringOf(rest, '#');
  if (offering.tainted !== null) {
    return { ok: false, reason: `the input schema carries a chat-template control token or an envelope tag where it decides what is valid (at ${offering.tainted.slice(0, 200)})` };
  }
  const offered = offering.offered as Record<string, unknown>;
  const offeredBytes = Buffer.byteLength(JSON.stringify(offered), 'utf8');
  if (offeredBytes > MAX_REMOTE_DEFINITION_BYTES) {
    return { ok: false, reason: `the input schema as offered to the model is ${offeredBytes} bytes, over the ${MAX_REMOTE_DEFINITION_BYTES}-byte limit of a tool definition` };
  }
  const patterns = new PatternCompiler();
  const cost = validationCostOf(rest, patterns);
  if ('problem' in cost) return { ok: false, reason: cost.problem };
  let validate: ReturnType<typeof ajv.compile>;
  activeCompiler = patterns;
  try {
    validate = ajv.compile(rest);
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 300) : 'unknown error';
    return { ok: false, reason: `the input schema is not valid JSON Schema (${detail})` };
  } finally {
    activeCompiler = null;
    // Ajv keeps every compiled schema object in a cache; ours are compiled once per (re)load.
    ajv.removeSchema(rest);
  }
  const parameters = z.unknown().superRefine((value, context) => {
    const oversized = oversizedArguments(value, cost);
    if (oversized !== null) {
      context.addIssue(oversized);
      return;
    }
    let valid: boolean;
    try {
      valid = validate(value) as boolean;
    } catch {
      // Defensive: arguments are measured first, so no value should get here; if one does, it is invalid.
      context.addIssue({ code: 'custom', path: [], input: undefined });
      return;
    }
    if (valid) return;
    for (const issue of (validate.errors ?? []).slice(0, 20)) context.addIssue(toZodIssue(issue));
  }) as unknown as z.ZodType<Record<string, unknown>>;
  return { ok: true, schema: offered, parameters };
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

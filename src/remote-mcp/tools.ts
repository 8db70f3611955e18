import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { RegExpLike } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { isValidToolName } from '../tools/registry.ts';
import { ToolResult } from '../tools/result.ts';
import { neutraliseControlTokens, neutraliseQuarantineTags } from '../tools/sanitize.ts';
import type { Tool } from '../tools/tool.ts';
import type { RemoteCallResult } from './client.ts';

/** The group of an imported server's tools. */
export const mcpGroup = (serverName: string) => `mcp:${serverName}`;

/** A remote description is model-facing text from outside: neutralised and capped. */
export const MAX_REMOTE_DESCRIPTION_CHARS = 1_000;
/** A remote input schema larger than this (as JSON) is not even stored: its tool is unavailable. */
export const MAX_REMOTE_SCHEMA_BYTES = 64 * 1024;
/**
 * A remote tool's whole definition as offered to the model (name, description, input schema JSON;
 * UTF-8 bytes). Beyond it the tool is unavailable with its reason; nothing is cut silently.
 */
export const MAX_REMOTE_DEFINITION_BYTES = 8 * 1024;
/** Arguments for a remote tool larger than this (UTF-8 JSON) are refused before any validation runs. */
export const MAX_REMOTE_ARGUMENT_BYTES = 64 * 1024;
/** Arguments nested deeper than this are refused before validation (no honest tool input is). */
export const MAX_REMOTE_ARGUMENT_DEPTH = 64;
/**
 * Checks one argument value can meet: subschemas, `enum` options, and `multipleOf` (whose number
 * formatting costs about as much as 256 plain checks), counted with every `$ref` expanded in place
 * (`anyOf: [{$ref}, {$ref}]` chains would otherwise double the work at each level).
 */
export const MAX_REMOTE_SCHEMA_CHECKS = 1_000;
/**
 * Work per character of a string or key: RE2 program instructions of every `pattern` and
 * `patternProperties` key, plus one per `minLength`/`maxLength` (they count code points), with every
 * `$ref` expanded. A linear-time match still costs (instructions x characters).
 */
export const MAX_REMOTE_PATTERN_PROGRAM = 1_000;
/**
 * One call's validation budget, estimated from the arguments BEFORE validating: values x checks, and
 * characters x per-character work. Each bound is about 25 ms of one core of the machine we measured
 * (README, "Imported tools"); arguments over it are refused without being validated.
 */
export const MAX_REMOTE_VALIDATION_CHECKS = 1_000_000;
export const MAX_REMOTE_VALIDATION_CHARACTER_STEPS = 4_000_000;

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
  | {
      readonly ok: true;
      /** The schema as offered to the model: its free text neutralised (validation uses the original). */
      readonly schema: Record<string, unknown>;
      readonly parameters: z.ZodType<Record<string, unknown>>;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * The patterns of one schema check, compiled for RE2 (linear-time: no backtracking, so no pattern can
 * stall the event loop whatever the input), each once; RE2 refuses a single pattern past its own size
 * limit, and the cost walk (validationCostOf) charges each pattern every place it applies.
 */
class PatternCompiler {
  readonly #compiled = new Map<string, RE2JS>();

  /** Throws for syntax RE2 lacks (lookaround, backreferences). */
  compiled(pattern: string): RE2JS {
    const known = this.#compiled.get(pattern);
    if (known) return known;
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      const detail = error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
      throw new Error(`the pattern ${JSON.stringify(pattern.slice(0, 100))} is not supported by the linear-time (RE2) engine: ${detail}`);
    }
    this.#compiled.set(pattern, compiled);
    return compiled;
  }
}

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
 * Model-facing text from outside: chat-template control tokens and quarantine envelope tags escaped
 * (a tool definition is read by the model just like a tool's output).
 */
export function neutraliseRemoteText(text: string): string {
  return neutraliseQuarantineTags(neutraliseControlTokens(text));
}

export function describeRemoteTool(description: string): string {
  return neutraliseRemoteText(description.slice(0, MAX_REMOTE_DESCRIPTION_CHARS));
}

/**
 * Schema keywords (JSON Schema 2020-12, and draft 7's where Ajv reads them) by what their value is.
 * Everything not listed here validates nothing (annotations: `description`, `title`, `default`,
 * `examples`, `$comment`, … and unknown keywords, which Ajv ignores): their strings are neutralised
 * in the copy offered to the model. The strings of a listed validating keyword (`enum`, `const`,
 * `required`, `pattern`, property names, …) decide which arguments are accepted: neutralising them
 * would make the model send values the remote never declared, so a tool whose validating strings
 * carry a control token or an envelope tag is refused instead.
 */
const ONE_SUBSCHEMA = new Set(['additionalProperties', 'propertyNames', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']);
const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const VALIDATING = new Set([
  '$ref', '$dynamicRef', '$recursiveRef', '$id', '$anchor', '$dynamicAnchor', '$recursiveAnchor', '$schema', '$vocabulary',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required',
  'dependentRequired', 'format',
]);

interface Offering {
  readonly offered: unknown;
  /** Where a validating string carries a token (JSON pointer of the first one), else null. */
  readonly tainted: string | null;
}

/** Every string and key deep inside `value` neutralised (annotations, unknown keywords). */
function neutraliseDeep(value: unknown): unknown {
  if (typeof value === 'string') return neutraliseRemoteText(value);
  if (Array.isArray(value)) return value.map(neutraliseDeep);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [neutraliseRemoteText(key), neutraliseDeep(inner)]));
  return value;
}

/** The pointer of the first string or key inside `value` that neutralising would change, else null. */
function firstTainted(value: unknown, at: string): string | null {
  if (typeof value === 'string') return neutraliseRemoteText(value) === value ? null : at;
  if (Array.isArray(value)) {
    for (const [index, inner] of value.entries()) {
      const found = firstTainted(inner, `${at}/${index}`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (neutraliseRemoteText(key) !== key) return `${at}/${pointerSegment(key)}`;
      const found = firstTainted(inner, `${at}/${pointerSegment(key)}`);
      if (found !== null) return found;
    }
  }
  return null;
}

function pointerSegment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The copy of a (sub)schema offered to the model, or where it carries a token that validation reads. */
function offeringOf(schema: unknown, at: string): Offering {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return { offered: schema, tainted: null };
  const offered: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema as Record<string, unknown>)) {
    const here = `${at}/${pointerSegment(keyword)}`;
    let inner: Offering;
    if (ONE_SUBSCHEMA.has(keyword)) inner = offeringOf(value, here);
    else if (keyword === 'items') inner = Array.isArray(value) ? offeringOfList(value, here) : offeringOf(value, here);
    else if (SUBSCHEMA_LIST.has(keyword)) inner = Array.isArray(value) ? offeringOfList(value, here) : { offered: value, tainted: firstTainted(value, here) };
    else if (SUBSCHEMA_MAP.has(keyword) || keyword === 'dependencies') inner = offeringOfMap(value, here);
    else if (VALIDATING.has(keyword)) inner = { offered: value, tainted: firstTainted(value, here) };
    else {
      offered[neutraliseRemoteText(keyword)] = neutraliseDeep(value);
      continue;
    }
    if (inner.tainted !== null) return inner;
    offered[keyword] = inner.offered;
  }
  return { offered, tainted: null };
}

function offeringOfList(schemas: readonly unknown[], at: string): Offering {
  const offered: unknown[] = [];
  for (const [index, schema] of schemas.entries()) {
    const inner = offeringOf(schema, `${at}/${index}`);
    if (inner.tainted !== null) return inner;
    offered.push(inner.offered);
  }
  return { offered, tainted: null };
}

/** Property names (or definition names) map to subschemas; draft 7's `dependencies` may map to a list of names. */
function offeringOfMap(map: unknown, at: string): Offering {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return { offered: map, tainted: firstTainted(map, at) };
  const offered: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(map)) {
    const here = `${at}/${pointerSegment(key)}`;
    if (neutraliseRemoteText(key) !== key) return { offered: map, tainted: here };
    const inner = Array.isArray(value) ? { offered: value, tainted: firstTainted(value, here) } : offeringOf(value, here);
    if (inner.tainted !== null) return inner;
    offered[key] = inner.offered;
  }
  return { offered, tainted: null };
}

/** What validating one value against a schema can cost: per value, and per character of a string or key. */
interface ValidationCost {
  readonly checks: number;
  readonly perCharacter: number;
}

/**
 * What validating against `root` costs, or why it is refused. Walks the schema as validation applies
 * it, every `$ref` expanded in place, within MAX_REMOTE_SCHEMA_CHECKS and the pattern budget (see
 * PatternCompiler); no recursion (a `$ref` cycle: validation work would then follow the schema's own
 * loops, and a cycle that does not descend into the value never ends); only `#`-local JSON-pointer
 * references (nothing is fetched, and no nested `$id` moves their base).
 */
function validationCostOf(root: Record<string, unknown>, patterns: PatternCompiler): ValidationCost | { readonly problem: string } {
  let checks = 0;
  let perCharacter = 0;
  const expanding: unknown[] = [];
  const charge = (pattern: string) => {
    perCharacter += patterns.compiled(pattern).programSize();
  };
  const visit = (schema: unknown): string | null => {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return null;
    const node = schema as Record<string, unknown>;
    checks += 1 + (Array.isArray(node.enum) ? node.enum.length : 0) + ('multipleOf' in node ? 256 : 0);
    if (checks > MAX_REMOTE_SCHEMA_CHECKS) return `the input schema expands to more than ${MAX_REMOTE_SCHEMA_CHECKS} checks (subschemas and enum options, with its $refs followed)`;
    if (node !== root && '$id' in node) return 'the input schema sets $id below its root';
    if ('$dynamicRef' in node || '$recursiveRef' in node) return 'the input schema uses $dynamicRef or $recursiveRef';
    if (typeof node.pattern === 'string') charge(node.pattern);
    perCharacter += ('minLength' in node ? 1 : 0) + ('maxLength' in node ? 1 : 0);
    for (const [keyword, value] of Object.entries(node)) {
      let problem: string | null = null;
      if (keyword === '$ref') problem = typeof value === 'string' ? follow(value) : null;
      else if (ONE_SUBSCHEMA.has(keyword)) problem = visit(value);
      else if (SUBSCHEMA_LIST.has(keyword) || keyword === 'items') problem = Array.isArray(value) ? visitAll(value) : visit(value);
      else if (keyword === 'properties' || keyword === 'patternProperties' || keyword === 'dependentSchemas' || keyword === 'dependencies') {
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          // With additionalProperties beside them, every key is tested against the patterns twice.
          if (keyword === 'patternProperties') for (const pattern of Object.keys(value)) for (let twice = 0; twice < 2; twice++) charge(pattern);
          problem = visitAll(Object.values(value).filter((inner) => !Array.isArray(inner)));
        }
      }
      if (problem === null && perCharacter > MAX_REMOTE_PATTERN_PROGRAM) {
        problem = `the patterns and lengths of the input schema exceed ${MAX_REMOTE_PATTERN_PROGRAM} steps per character (RE2 instructions, counted where they apply)`;
      }
      if (problem !== null) return problem;
    }
    return null;
  };
  const visitAll = (schemas: readonly unknown[]): string | null => {
    for (const schema of schemas) {
      const problem = visit(schema);
      if (problem !== null) return problem;
    }
    return null;
  };
  const follow = (reference: string): string | null => {
    const target = resolveLocalPointer(root, reference);
    if (target === undefined) return `the input schema's $ref ${JSON.stringify(reference.slice(0, 100))} is not a local JSON pointer (#/…) to a subschema`;
    if (expanding.includes(target)) return `the input schema is recursive ($ref ${JSON.stringify(reference.slice(0, 100))} refers to itself)`;
    expanding.push(target);
    const problem = visit(target);
    expanding.pop();
    return problem;
  };
  try {
    const problem = visit(root);
    return problem === null ? { checks, perCharacter } : { problem };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : 'the input schema cannot be checked' };
  }
}

/** The subschema `#` or `#/a/b` points at inside `root` (URI-decoded, `~1` and `~0` undone), else undefined. */
function resolveLocalPointer(root: Record<string, unknown>, reference: string): object | undefined {
  if (reference === '#') return root;
  if (!reference.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of reference.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? node : undefined;
}

/** The size of a value as validation walks it: values, characters of strings and keys, UTF-8 JSON bytes. */
interface ArgumentSize {
  readonly values: number;
  readonly characters: number;
  readonly bytes: number;
}

/**
 * Measures arguments without recursion (a value may be nested far deeper than the stack); null when
 * they are nested deeper than MAX_REMOTE_ARGUMENT_DEPTH or are larger than MAX_REMOTE_ARGUMENT_BYTES
 * (then the walk stops as soon as it knows).
 */
function argumentSize(value: unknown): ArgumentSize | null {
  let values = 0;
  let characters = 0;
  let bytes = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    values++;
    if (depth > MAX_REMOTE_ARGUMENT_DEPTH) return null;
    if (typeof item === 'string') {
      characters += item.length;
      bytes += Buffer.byteLength(item, 'utf8') + 2;
    } else if (Array.isArray(item)) {
      bytes += 2 + item.length;
      for (const inner of item) pending.push([inner, depth + 1]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      bytes += 2 + entries.length * 2;
      for (const [key, inner] of entries) {
        characters += key.length;
        bytes += Buffer.byteLength(key, 'utf8') + 2;
        pending.push([inner, depth + 1]);
      }
    } else bytes += String(item).length;
    if (bytes > MAX_REMOTE_ARGUMENT_BYTES) return null;
  }
  return { values, characters, bytes };
}

/** Why these arguments are refused before validation (a value-free zod issue), or null. */
function oversizedArguments(value: unknown, cost: ValidationCost) {
  const size = argumentSize(value);
  const tooBig = (origin: string, maximum: number) => ({ code: 'too_big' as const, origin: origin as 'string', maximum, inclusive: true, path: [], input: undefined });
  if (size === null) return tooBig(`arguments (UTF-8 JSON bytes, at most ${MAX_REMOTE_ARGUMENT_DEPTH} levels deep)`, MAX_REMOTE_ARGUMENT_BYTES);
  if (size.values * cost.checks > MAX_REMOTE_VALIDATION_CHECKS) return tooBig("arguments' values for this schema", Math.floor(MAX_REMOTE_VALIDATION_CHECKS / cost.checks));
  if (size.characters * cost.perCharacter > MAX_REMOTE_VALIDATION_CHARACTER_STEPS) {
    return tooBig("arguments' characters for this schema", Math.floor(MAX_REMOTE_VALIDATION_CHARACTER_STEPS / cost.perCharacter));
  }
  return null;
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

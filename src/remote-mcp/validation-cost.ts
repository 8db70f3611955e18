import { RE2JS } from 're2js';
import { ONE_SUBSCHEMA, SUBSCHEMA_LIST } from './schema-offering.ts';

/**
 * The bounds on the work of validating arguments against a remote schema: the schema's own cost
 * (checks per value, steps per character) measured once when it is checked, and each call's
 * arguments measured against it BEFORE validation runs, so no schema or argument can stall the
 * event loop.
 */

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

/**
 * The patterns of one schema check, compiled for RE2 (linear-time: no backtracking, so no pattern can
 * stall the event loop whatever the input), each once; RE2 refuses a single pattern past its own size
 * limit, and the cost walk (validationCostOf) charges each pattern every place it applies.
 */
export class PatternCompiler {
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

/** What validating one value against a schema can cost: per value, and per character of a string or key. */
export interface ValidationCost {
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
export function validationCostOf(root: Record<string, unknown>, patterns: PatternCompiler): ValidationCost | { readonly problem: string } {
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
export function oversizedArguments(value: unknown, cost: ValidationCost) {
  const size = argumentSize(value);
  const tooBig = (origin: string, maximum: number) => ({ code: 'too_big' as const, origin: origin as 'string', maximum, inclusive: true, path: [], input: undefined });
  if (size === null) return tooBig(`arguments (UTF-8 JSON bytes, at most ${MAX_REMOTE_ARGUMENT_DEPTH} levels deep)`, MAX_REMOTE_ARGUMENT_BYTES);
  if (size.values * cost.checks > MAX_REMOTE_VALIDATION_CHECKS) return tooBig("arguments' values for this schema", Math.floor(MAX_REMOTE_VALIDATION_CHECKS / cost.checks));
  if (size.characters * cost.perCharacter > MAX_REMOTE_VALIDATION_CHARACTER_STEPS) {
    return tooBig("arguments' characters for this schema", Math.floor(MAX_REMOTE_VALIDATION_CHARACTER_STEPS / cost.perCharacter));
  }
  return null;
}

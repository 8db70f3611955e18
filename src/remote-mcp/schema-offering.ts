import { neutraliseControlTokens } from '../tools/sanitize.ts';
import { neutraliseQuarantineTags } from '../tools/quarantine.ts';

/**
 * What the model is offered of a remote tool's definition: its free text with chat-template control
 * tokens and quarantine envelope tags escaped, or, where such a string decides what is valid, where
 * it sits (then the tool is refused). Validation itself always uses the original schema.
 */

/**
 * Model-facing text from outside: chat-template control tokens and quarantine envelope tags escaped
 * (a tool definition is read by the model just like a tool's output).
 */
export function neutraliseRemoteText(text: string): string {
  return neutraliseQuarantineTags(neutraliseControlTokens(text));
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
export const ONE_SUBSCHEMA = new Set(['additionalProperties', 'propertyNames', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']);
export const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const VALIDATING = new Set([
  '$ref', '$dynamicRef', '$recursiveRef', '$id', '$anchor', '$dynamicAnchor', '$recursiveAnchor', '$schema', '$vocabulary',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required',
  'dependentRequired', 'format',
]);

export interface Offering {
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
export function offeringOf(schema: unknown, at: string): Offering {
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

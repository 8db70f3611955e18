import { type Artifact, type TextArtifact, textArtifact } from './result.ts';
import { coerceUtf8 } from './utf8.ts';

/**
 * The bounds of a tool result's artifacts, all or nothing: a list that is not plain, well-formed,
 * known-shaped JSON within its byte budget becomes one `Artifacts omitted` notice saying why. The
 * content's bounds, and the seam that applies both, are bounds.ts.
 */

/** Cap on the JSON encoding of a result's whole artifact list, in UTF-8 bytes; independent of the content cap. */
export const MAX_ARTIFACT_BYTES = 50_000;
/** Deepest container nesting allowed in the encoded artifact list (the list itself is depth 1). */
export const MAX_ARTIFACT_DEPTH = 64;

/** The label of the single artifact that replaces a list that failed its bounds. */
export const ARTIFACTS_OMITTED_LABEL = 'Artifacts omitted';

/**
 * Smallest artifact budget accepted: room for the `Artifacts omitted` notice, so that the result of
 * `boundArtifacts` always fits its budget.
 */
export const MIN_ARTIFACT_BYTES = 256;

/** Why an artifact list was refused; the message is the human sentence shown in its place. */
class ArtifactRejection extends Error {}

function reject(reason: string): never {
  throw new ArtifactRejection(reason);
}

function unencodable(what: string): never {
  reject(`artifacts could not be encoded: ${what}`);
}

/**
 * A fresh copy of `value` made only of plain JSON (objects, arrays, strings, finite numbers,
 * booleans, null), every string — keys included — coerced to well-formed UTF-8. Anything else is
 * refused with a reason. `ancestors` holds the containers on the current path: shared (DAG)
 * references encode fine in JSON, only a path back to an ancestor is a cycle.
 */
function copyAsJson(value: unknown, depth: number, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
      return coerceUtf8(value);
    case 'number':
      return Number.isFinite(value) ? value : reject('artifact contains a non-finite number');
    case 'boolean':
      return value;
    case 'bigint':
      return unencodable('bigint value');
    case 'undefined':
      return unencodable('undefined value');
    case 'function':
      return unencodable('function value');
    case 'symbol':
      return unencodable('symbol value');
  }
  if (value === null) return null;
  const container = value as object;
  if (ancestors.has(container)) return unencodable('cyclic structure');
  if (depth > MAX_ARTIFACT_DEPTH) return reject(`artifact nesting exceeds depth ${MAX_ARTIFACT_DEPTH}`);
  const prototype: unknown = Object.getPrototypeOf(container);
  ancestors.add(container);
  let copy: unknown;
  if (Array.isArray(container)) {
    if (prototype !== Array.prototype) unencodable('non-plain array');
    const items: unknown[] = [];
    for (let i = 0; i < container.length; i++) {
      // A hole reads as undefined and is refused like one.
      items.push(copyAsJson(container[i], depth + 1, ancestors));
    }
    copy = items;
  } else {
    if (prototype !== Object.prototype && prototype !== null) unencodable('non-plain object');
    const entries: [string, unknown][] = [];
    for (const key of Object.keys(container)) {
      const item: unknown = (container as Record<string, unknown>)[key];
      // JSON drops undefined properties; so do we, rather than refusing the whole list.
      if (item === undefined) continue;
      entries.push([coerceUtf8(key), copyAsJson(item, depth + 1, ancestors)]);
    }
    // fromEntries defines own data properties: a `__proto__` key stays a key, never a prototype.
    copy = Object.fromEntries(entries);
  }
  ancestors.delete(container);
  return copy;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function hasExactKeys(value: unknown, keys: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/** Exactly one `Artifact` union member: no missing, extra or mistyped field. */
function isKnownArtifact(value: unknown): value is Artifact {
  if (!hasExactKeys(value, ['type', 'label', 'data']) || typeof value.label !== 'string') return false;
  const { data } = value;
  switch (value.type) {
    case 'table':
      return (
        hasExactKeys(data, ['columns', 'rows']) &&
        isStringArray(data.columns) &&
        Array.isArray(data.rows) &&
        data.rows.every(isStringArray)
      );
    case 'text':
      return hasExactKeys(data, ['text']) && typeof data.text === 'string';
    default:
      return false;
  }
}

function omitted(reason: string): [TextArtifact] {
  return [textArtifact(ARTIFACTS_OMITTED_LABEL, reason)];
}

/**
 * Artifacts bounded for storage and display: all or nothing. Every string leaf (and key) is coerced
 * to well-formed UTF-8, the list must be plain JSON no deeper than `MAX_ARTIFACT_DEPTH`, with no
 * non-finite number, made of known artifact shapes, and its JSON encoding must fit `maxBytes`.
 * On any failure the WHOLE list becomes one `Artifacts omitted` text artifact whose text says why —
 * never a partial cut, which could show a misleading fragment. Artifact numbers in reasons are
 * 0-based list indexes. Returns fresh plain objects, never the caller's.
 */
export function boundArtifacts(artifacts: readonly unknown[], maxBytes: number = MAX_ARTIFACT_BYTES): Artifact[] {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_ARTIFACT_BYTES) {
    throw new RangeError(`an artifact budget of ${maxBytes} bytes cannot hold the omission notice`);
  }
  if (!Array.isArray(artifacts)) return omitted('artifacts are not a list');
  if (artifacts.length === 0) return [];
  try {
    const copy = copyAsJson(artifacts, 1, new Set()) as unknown[];
    const unknownShape = copy.findIndex((artifact) => !isKnownArtifact(artifact));
    if (unknownShape !== -1) reject(`artifact ${unknownShape} is not a known artifact shape`);
    const bytes = Buffer.byteLength(JSON.stringify(copy), 'utf8');
    if (bytes > maxBytes) reject(`artifacts exceed the ${maxBytes}-byte budget (${bytes} bytes)`);
    return copy as Artifact[];
  } catch (error) {
    if (error instanceof ArtifactRejection) return omitted(error.message);
    // A throwing getter or proxy trap: the tool's own message may carry anything, so it is not echoed.
    return omitted('artifacts could not be encoded: reading them threw an error');
  }
}

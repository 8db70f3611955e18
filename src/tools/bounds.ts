/**
 * The byte bounds every tool result passes through before it goes anywhere. `boundToolResult` is
 * the ONE seam: the loop calls it for every invocation, so no tool can flood a prompt, a database row
 * or a subscription frame, and no tool can hand the model ill-formed text or a control token.
 */
import {
  neutraliseControlTokens,
  neutraliseQuarantineTags,
  quarantine,
  quarantinedContent,
  quarantineOverheadBytes,
} from './sanitize.ts';
import { type Artifact, type TextArtifact, type ToolResult, textArtifact } from './result.ts';

/** Cap on the model-facing content, in UTF-8 bytes, truncation marker included. */
export const MAX_CONTENT_BYTES = 50_000;
/** Cap on the JSON encoding of a result's whole artifact list, in UTF-8 bytes; independent of the content cap. */
export const MAX_ARTIFACT_BYTES = 50_000;
/** Deepest container nesting allowed in the encoded artifact list (the list itself is depth 1). */
export const MAX_ARTIFACT_DEPTH = 64;

/** What a truncated content ends with; it names the cap of the whole content. */
export function truncationMarker(maxBytes: number): string {
  return `\n…[tool result truncated at ${maxBytes} bytes]`;
}

export const TRUNCATION_MARKER = truncationMarker(MAX_CONTENT_BYTES);

/**
 * How content over the cap is cut, a per-configuration choice: `HEAD` keeps the longest start and
 * ends with `truncationMarker`; `MIDDLE` keeps a start and an end, about half the room each, with
 * `middleTruncationMarker` between them (for output whose end matters: a log tail, a stack trace, a
 * summary line).
 */
export const TRUNCATION_MODES = ['HEAD', 'MIDDLE'] as const;
export type TruncationMode = (typeof TRUNCATION_MODES)[number];
export const DEFAULT_TRUNCATION: TruncationMode = 'HEAD';

/**
 * What stands between the kept start and the kept end of a middle-out cut; it names the cap of the
 * whole content, like `truncationMarker`, and sits on lines of its own.
 */
export function middleTruncationMarker(maxBytes: number): string {
  return `\n…[tool result truncated at ${maxBytes} bytes: middle omitted]\n`;
}

export const MIDDLE_TRUNCATION_MARKER = middleTruncationMarker(MAX_CONTENT_BYTES);

/** The label of the single artifact that replaces a list that failed its bounds. */
export const ARTIFACTS_OMITTED_LABEL = 'Artifacts omitted';

/**
 * Smallest artifact budget accepted: room for the `Artifacts omitted` notice, so that the result of
 * `boundArtifacts` always fits its budget.
 */
export const MIN_ARTIFACT_BYTES = 256;

const utf8 = new TextEncoder();
// Non-fatal: invalid sequences become U+FFFD. BOM kept: coercion must not change valid text.
const utf8Lenient = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

// Node 20 has these (ES2024); the project's `lib` is ES2023, so they are typed here.
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * Valid UTF-8 text from whatever a tool produced: invalid byte sequences and lone UTF-16 surrogates
 * both become U+FFFD. A string that is already well formed is returned as the same object.
 */
export function coerceUtf8(value: string | Uint8Array): string {
  if (typeof value !== 'string') return utf8Lenient.decode(value);
  const text = value as unknown as WellFormedString;
  return text.isWellFormed() ? value : text.toWellFormed();
}

function assertByteCap(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`not a byte cap: ${maxBytes}`);
}

/**
 * Tool code is not always typed; anything that is neither text nor bytes is stringified. The seam
 * must not throw because of what a tool returned, hence the fallback.
 */
function toText(value: unknown): string {
  if (typeof value === 'string' || value instanceof Uint8Array) return coerceUtf8(value);
  try {
    return coerceUtf8(String(value));
  } catch {
    return '[tool content could not be read as text]';
  }
}

/**
 * `text` (well formed) if it fits `maxBytes`, else its longest whole-character prefix followed by
 * `marker`, together within `maxBytes`. Costs one native length scan, plus encoding the kept prefix
 * only when cutting — cheap for multi-megabyte input.
 */
function fitWithMarker(text: string, maxBytes: number, marker: string): string {
  assertByteCap(maxBytes);
  // Every UTF-16 unit is at most 3 UTF-8 bytes, so short text needs no scan at all.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(marker, 'utf8');
  if (room < 0) throw new RangeError(`a ${maxBytes}-byte cap cannot hold the truncation marker`);
  // encodeInto stops before a character that does not fit, surrogate pairs included, so `read` is a
  // character boundary.
  const { read } = utf8.encodeInto(text, new Uint8Array(room));
  return text.slice(0, read) + marker;
}

/**
 * Where the longest suffix of `text` that fits `maxBytes` UTF-8 bytes starts: never between the two
 * halves of a surrogate pair. Walks back over the kept characters only, so the cost is bounded by
 * the cap, not by the length of `text`.
 */
function suffixStart(text: string, maxBytes: number): number {
  let index = text.length;
  let bytes = 0;
  while (index > 0) {
    const unit = text.charCodeAt(index - 1);
    let width = unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    let units = 1;
    if (unit >= 0xdc00 && unit <= 0xdfff && index >= 2) {
      const high = text.charCodeAt(index - 2);
      if (high >= 0xd800 && high <= 0xdbff) {
        width = 4;
        units = 2;
      }
    }
    if (bytes + width > maxBytes) break;
    bytes += width;
    index -= units;
  }
  return index;
}

/**
 * `text` (well formed) if it fits `maxBytes`, else a whole-character prefix, `marker`, and a
 * whole-character suffix, together within `maxBytes`. The prefix gets half the room left by the
 * marker (rounded up); the suffix gets the rest, including what the prefix could not use because its
 * next character did not fit. Same cost as `fitWithMarker` plus a walk over the kept suffix.
 */
function fitKeepingEnds(text: string, maxBytes: number, marker: string): string {
  assertByteCap(maxBytes);
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(marker, 'utf8');
  if (room < 0) throw new RangeError(`a ${maxBytes}-byte cap cannot hold the truncation marker`);
  const { read, written } = utf8.encodeInto(text, new Uint8Array(Math.ceil(room / 2)));
  // Prefix and suffix together hold at most `room` < the text's bytes, so they never overlap.
  return text.slice(0, read) + marker + text.slice(suffixStart(text, room - written));
}

/** `text` cut to `maxBytes` the way `truncation` says, the marker naming `cap` (the whole content's cap). */
function fitContent(text: string, maxBytes: number, truncation: TruncationMode, cap: number = maxBytes): string {
  return truncation === 'MIDDLE'
    ? fitKeepingEnds(text, maxBytes, middleTruncationMarker(cap))
    : fitWithMarker(text, maxBytes, truncationMarker(cap));
}

/**
 * Content bounded for the model: valid UTF-8, at most `maxBytes` UTF-8 bytes. Content that fits —
 * exactly `maxBytes` included — is returned unchanged (the same string when it was already well
 * formed). Longer content is cut without splitting a character: with `HEAD` (the default) to its
 * longest prefix followed by `truncationMarker(maxBytes)`; with `MIDDLE` to a prefix,
 * `middleTruncationMarker(maxBytes)` and a suffix. Throws a RangeError when it must cut and
 * `maxBytes` cannot even hold the marker.
 */
export function boundContent(
  content: string | Uint8Array,
  maxBytes: number = MAX_CONTENT_BYTES,
  truncation: TruncationMode = DEFAULT_TRUNCATION,
): string {
  return fitContent(coerceUtf8(content), maxBytes, truncation);
}

/**
 * Quarantined content within `maxBytes`. When the envelope would not fit, the content inside is cut
 * to the room the envelope leaves, so the envelope's edges always survive, whatever the truncation.
 */
function boundQuarantined(text: string, maxBytes: number, truncation: TruncationMode): string {
  assertByteCap(maxBytes);
  const wrapped = quarantine(text);
  if (wrapped.length * 3 <= maxBytes || Buffer.byteLength(wrapped, 'utf8') <= maxBytes) return wrapped;
  const inside = quarantinedContent(text) ?? neutraliseQuarantineTags(text);
  const room = maxBytes - quarantineOverheadBytes;
  if (room < 0) throw new RangeError(`a ${maxBytes}-byte cap cannot hold the quarantine envelope`);
  // The cut inside holds no envelope tag and only adds a marker, so `quarantine` only wraps it.
  return quarantine(fitContent(inside, room, truncation, maxBytes));
}

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

export interface BoundOptions {
  /** Wrap the content in the quarantine envelope (a per-configuration choice). */
  quarantine?: boolean;
  /** How content over the cap is cut (a per-configuration choice); default `HEAD`. */
  truncation?: TruncationMode;
  maxContentBytes?: number;
  maxArtifactBytes?: number;
}

/**
 * THE seam between a tool and everything downstream; the loop calls it once for every invocation.
 * Content: coerced to valid UTF-8, control tokens neutralised, optionally quarantined, capped at
 * `maxContentBytes` (cut as `truncation` says) with the envelope inside the cap. Artifacts: `boundArtifacts`; an error result
 * keeps none. Idempotent. A result that needs no change is returned as is.
 */
export function boundToolResult(result: ToolResult, options: BoundOptions = {}): ToolResult {
  const maxContentBytes = options.maxContentBytes ?? MAX_CONTENT_BYTES;
  const truncation = options.truncation ?? DEFAULT_TRUNCATION;
  const neutral = neutraliseControlTokens(toText(result.content));
  const content = options.quarantine
    ? boundQuarantined(neutral, maxContentBytes, truncation)
    : fitContent(neutral, maxContentBytes, truncation);
  const unchangedContent = content === result.content;
  if (result.isError || result.artifacts.length === 0) {
    return unchangedContent ? result : result.withContent(content);
  }
  const artifacts = boundArtifacts(result.artifacts, options.maxArtifactBytes ?? MAX_ARTIFACT_BYTES);
  return (unchangedContent ? result : result.withContent(content)).withArtifacts(artifacts);
}

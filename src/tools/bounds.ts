/**
 * The byte bounds every tool result passes through before it goes anywhere. `boundToolResult` is
 * the ONE seam: the loop calls it for every invocation, so no tool can flood a prompt, a database row
 * or a subscription frame, and no tool can hand the model ill-formed text or a control token.
 * This file bounds the content; the artifacts' bounds are artifact-bounds.ts.
 */
import { neutraliseControlTokens } from './sanitize.ts';
import { neutraliseQuarantineTags, quarantine, quarantinedContent, quarantineOverheadBytes } from './quarantine.ts';
import { boundArtifacts, MAX_ARTIFACT_BYTES } from './artifact-bounds.ts';
import type { ToolResult } from './result.ts';
import { coerceUtf8 } from './utf8.ts';

/** Cap on the model-facing content, in UTF-8 bytes, truncation marker included. */
export const MAX_CONTENT_BYTES = 50_000;

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

const utf8 = new TextEncoder();

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

import { LOOKALIKE, neutraliseControlTokens } from './sanitize.ts';

/**
 * The quarantine envelope: untrusted tool output wrapped in `<tool_output_quarantine>` tags the
 * content cannot close or fake (its own tags are escaped as a reader would see them), so the model
 * can tell where untrusted data starts and ends. Control tokens are sanitize.ts's job.
 */

export const QUARANTINE_OPEN = '<tool_output_quarantine>';
export const QUARANTINE_CLOSE = '</tool_output_quarantine>';

const ENVELOPE_HEAD = `${QUARANTINE_OPEN}\n`;
const ENVELOPE_TAIL = `\n${QUARANTINE_CLOSE}`;

/** UTF-8 bytes the envelope adds around its content (the tags and their two newlines). */
export const quarantineOverheadBytes = Buffer.byteLength(ENVELOPE_HEAD + ENVELOPE_TAIL, 'utf8');

/**
 * Anything that could be read as an envelope tag: opening or closing, any case, whitespace around
 * the slash or before `>`, even with trailing attributes or no `>` at all — as a READER sees it:
 * compatibility forms decomposed (NFKD: `＜／ｔｏｏｌ＿…＞` in full-width forms reads as the tag) and
 * invisible format characters (zero-width spaces and joiners, soft hyphens, BOM, bidi controls)
 * ignored, so `</tool_output_<ZWSP>quarantine>` cannot close the envelope either. The envelope is a
 * boundary for the model, not for a tokenizer, hence the reader's view (issue 7; the breakouts are in
 * test/fixtures/injection-payloads.json). Neutralising the character read as `<` (and the one read as
 * a directly following `>`) is enough to stop it from being a tag.
 */
const TAG_NAME = 'tool_output_quarantine';
/** Every character whose NFKD holds a `<` that can start a tag (U+226E `≮` holds one too, but followed by a combining mark). */
const TAG_OPENERS = /[<\uFE64\uFF1C]/g;
const FORMAT_CHARACTER = /^\p{Cf}$/u;
const SPACE = /^\s$/;

/** A tag found in source text: where its opener is and, when it has one, its closing `>` (index, UTF-16 length). */
interface EnvelopeTag {
  readonly open: number;
  readonly close: readonly [number, number] | null;
}

/** One non-ASCII character as a reader sees it: a format character as nothing, anything else decomposed. */
function readAs(character: string): string {
  return FORMAT_CHARACTER.test(character) ? '' : character.normalize('NFKD');
}

/** Whitespace as `\s` has it (ASCII fast path first). */
function isSpace(unit: string): boolean {
  const code = unit.charCodeAt(0);
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x80 && SPACE.test(unit));
}

/**
 * The tag whose opener is at `open`, read one character at a time; null when none starts there.
 * `matched` counts the letters of the name read so far; before the first, spaces and one `/` may come.
 */
function tagAt(text: string, open: number): EnvelopeTag | null {
  let slash = false;
  let matched = 0;
  for (let index = open + 1; index < text.length; ) {
    const code = text.charCodeAt(index);
    const character = code < 0x80 ? text[index]! : String.fromCodePoint(text.codePointAt(index)!);
    const read = code < 0x80 ? character : readAs(character);
    for (let at = 0; at < read.length; at++) {
      const unit = read[at]!;
      if (matched === TAG_NAME.length) {
        if (isSpace(unit)) continue;
        return { open, close: unit === '>' ? [index, character.length] : null };
      }
      if (matched === 0 && isSpace(unit)) continue;
      if (matched === 0 && unit === '/' && !slash) slash = true;
      else if (unit === TAG_NAME[matched] || unit.toLowerCase() === TAG_NAME[matched]) matched++;
      else return null;
    }
    index += character.length;
  }
  return matched === TAG_NAME.length ? { open, close: null } : null;
}

function envelopeTagsIn(text: string): EnvelopeTag[] {
  const tags: EnvelopeTag[] = [];
  TAG_OPENERS.lastIndex = 0;
  for (let opener = TAG_OPENERS.exec(text); opener !== null; opener = TAG_OPENERS.exec(text)) {
    const tag = tagAt(text, opener.index);
    if (tag) tags.push(tag);
  }
  return tags;
}

/**
 * Escape every envelope tag in text that is meant to sit INSIDE an envelope, with the same
 * look-alike brackets as control tokens. Idempotent; clean text is returned as is.
 */
export function neutraliseQuarantineTags(text: string): string {
  const tags = envelopeTagsIn(text);
  if (tags.length === 0) return text;
  let result = '';
  let kept = 0;
  for (const { open, close } of tags) {
    // Every opener is one UTF-16 unit.
    result += text.slice(kept, open) + LOOKALIKE['<'];
    kept = open + 1;
    if (close) {
      result += text.slice(kept, close[0]) + LOOKALIKE['>'];
      kept = close[0] + close[1];
    }
  }
  return result + text.slice(kept);
}

/** The inside of a clean envelope, or `null` when `text` is not one. */
export function quarantinedContent(text: string): string | null {
  if (text.length < ENVELOPE_HEAD.length + ENVELOPE_TAIL.length) return null;
  if (!text.startsWith(ENVELOPE_HEAD) || !text.endsWith(ENVELOPE_TAIL)) return null;
  const inside = text.slice(ENVELOPE_HEAD.length, text.length - ENVELOPE_TAIL.length);
  return envelopeTagsIn(inside).length > 0 ? null : inside;
}

/**
 * Wrap tool output in `<tool_output_quarantine>\n…\n</tool_output_quarantine>` so the model can tell
 * where untrusted data starts and ends. Envelope tags inside are neutralised, so the content cannot
 * close the envelope early. Idempotent: a clean envelope is returned unchanged.
 */
export function quarantine(text: string): string {
  if (quarantinedContent(text) !== null) return text;
  return ENVELOPE_HEAD + neutraliseQuarantineTags(text) + ENVELOPE_TAIL;
}

/** Everything the model-facing copy of tool content needs, except the byte bound. Idempotent. */
export function sanitizeForModel(text: string, options: { quarantine: boolean }): string {
  const neutral = neutraliseControlTokens(text);
  return options.quarantine ? quarantine(neutral) : neutral;
}

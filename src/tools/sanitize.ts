/**
 * Model-facing hygiene for tool output. A tool's content is data, not conversation: it must not be
 * able to open a new chat turn (control tokens) or close the quarantine envelope around it.
 *
 * Escape format: the brackets of a matched token are replaced by look-alikes that no tokenizer
 * treats as special and that NFKC leaves alone — `<` → `‹` (U+2039), `>` → `›` (U+203A),
 * `[` → `⟦` (U+27E6), `]` → `⟧` (U+27E7). So `<|im_start|>` becomes `‹|im_start|›`, `[INST]`
 * becomes `⟦INST⟧`, `<<SYS>>` becomes `‹‹SYS››` and DeepSeek's `<｜tool▁calls▁begin｜>` becomes
 * `‹｜tool▁calls▁begin｜›` (the bars, ASCII or full-width, are left as they are: without its
 * brackets no token remains). The token stays readable for a human or a model reading the output,
 * and the original token never survives.
 *
 * Matching happens on the text as written AND as an NFKC-normalising tokenizer reads it, so
 * full-width and other compatibility look-alikes (`［INST］`, `＜|im_start|＞`, `<｜User｜>` whose
 * bars fold to `|`, `<|ｉｍ_start|>`) are escaped too — the look-alike brackets themselves included,
 * since they fold back to ASCII. Text in which neither reading holds a token is left as it is.
 * Otherwise every character is compared by its own NFKC fold and each token found is escaped: NFKC
 * of a whole text forms no token that folding each character alone does not (composition only
 * turns ASCII into non-ASCII), so no token survives in the output or in its NFKC form. The escape
 * characters are NFKC-stable and none is a token character, so applying the escape twice equals
 * applying it once; each replaces one UTF-16 unit with one, so indexes do not move.
 *
 * Matching is ASCII case-insensitive (`<|IM_START|>` is escaped too): tokenizers are case-sensitive,
 * but an attacker probing a model with near-miss spellings should not be rewarded, and false
 * positives only cost a harmless re-bracketing.
 *
 * The other half of model-facing hygiene, the envelope around untrusted output, is quarantine.ts.
 */

/**
 * The chat-template control tokens we neutralise:
 * - every `<|name|>` token — ChatML (`im_start`, `im_end`), `endoftext`, Llama 3 (`start_header_id`,
 *   `end_header_id`, `eot_id`, …), Harmony (`start`, `channel`, `message`, `end`, `call`, `return`,
 *   `constrain`), DeepSeek's `｜…｜` family once its full-width bars are folded (`begin▁of▁sentence`,
 *   `tool▁calls▁begin`, `tool▁sep`, `User`, `Assistant`, … with U+2581 `▁` between words) and their
 *   relatives; a general shape rather than a list, so a new template's tokens are covered without
 *   an edit;
 * - Mistral / Llama 2 square-bracket tokens: `[INST]`, `[/INST]` and the Mistral tool/system family;
 * - Llama 2 `<<SYS>>`, `<</SYS>>`; Gemma `<start_of_turn>`, `<end_of_turn>`.
 */
const CONTROL_TOKEN_SOURCE = [
  String.raw`<\|[\w.\-\u2581]{1,64}\|>`,
  String.raw`\[\/?(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]`,
  String.raw`<<\/?SYS>>`,
  String.raw`<(?:start|end)_of_turn>`,
].join('|');

// Two instances on purpose: the non-global one is for `.test` (a global regex would carry
// `lastIndex` between calls); `replace` and `matchAll` with the global one always start from 0.
const CONTROL_TOKEN = new RegExp(CONTROL_TOKEN_SOURCE, 'i');
const CONTROL_TOKENS = new RegExp(CONTROL_TOKEN_SOURCE, 'gi');

/** Every character a CONTROL_TOKEN_SOURCE match can contain (keep in step with it). */
const TOKEN_CHARACTER = /[<>|[\]/\w.\-\u2581]/;

/** The escape of each bracket (the quarantine envelope escapes its tags with the same ones). */
export const LOOKALIKE: Readonly<Record<string, string>> = {
  '<': '\u2039',
  '>': '\u203A',
  '[': '\u27E6',
  ']': '\u27E7',
};

/** The look-alike of each ASCII bracket in `text`; anything else is kept. */
function escapeAsciiBrackets(text: string): string {
  return text.replace(/[<>[\]]/g, (bracket) => LOOKALIKE[bracket] ?? bracket);
}

/**
 * The NFKC folds that matter for matching: every character outside ASCII whose fold differs from it
 * and holds a token character — `＜` → `<`, `｜` → `|`, `ｉ` → `i`, `…` → `...`, `ﬁ` → `fi`, `𝐢` → `i`;
 * about 1 700 of them. A character whose fold holds no token character cannot be part of a match,
 * folded or not, so it is left as it is. No character above U+1FFFF has such a fold (the plane 2
 * compatibility ideographs fold to ideographs), which test/tools/sanitize.test.ts checks.
 */
interface Folding {
  /** Per BMP code unit: its one-unit fold (the full-width forms), else 0. */
  readonly unitFolds: Uint16Array;
  /** Per BMP code unit: 1 when it (or, for a high surrogate, a character it starts) has a fold in `longFolds`. */
  readonly hasLongFold: Uint8Array;
  /** Code point → its fold when that is not one BMP unit for one BMP unit (`…` → `...`, `𝐢` → `i`). */
  readonly longFolds: ReadonlyMap<number, string>;
  /** The most units one of `longFolds` has (6, for `㎯` → `rad∕s2`). */
  readonly longestFold: number;
  /** Every character that is, or folds to, `<`, `>`, `[` or `]` (each one BMP unit folding to one, as the test checks). */
  readonly brackets: RegExp;
}

/** The last code point whose NFKC fold can hold a token character. */
export const LAST_FOLDED_CODE_POINT = 0x1ffff;

let folding: Folding | null = null;

/** Built on first use (one pass over the first two planes, about 10 ms), then kept. */
function foldingTable(): Folding {
  if (folding) return folding;
  const unitFolds = new Uint16Array(0x10000);
  const hasLongFold = new Uint8Array(0x10000);
  const longFolds = new Map<number, string>();
  const brackets: string[] = [];
  let longestFold = 0;
  for (let point = 0x80; point <= LAST_FOLDED_CODE_POINT; point++) {
    if (point >= 0xd800 && point <= 0xdfff) continue;
    const character = String.fromCodePoint(point);
    const fold = character.normalize('NFKC');
    if (fold === character || !TOKEN_CHARACTER.test(fold)) continue;
    if (point <= 0xffff && fold.length === 1) unitFolds[point] = fold.charCodeAt(0);
    else {
      longFolds.set(point, fold);
      hasLongFold[character.charCodeAt(0)] = 1;
      longestFold = Math.max(longestFold, fold.length);
    }
    if (/[<>[\]]/.test(fold)) brackets.push(`\\u{${point.toString(16)}}`);
  }
  folding = { unitFolds, hasLongFold, longFolds, longestFold, brackets: new RegExp(`[<>[\\]${brackets.join('')}]`, 'gu') };
  return folding;
}

/**
 * `text` as the matcher reads it, and where the folds that changed the length sit (parallel
 * arrays, in order; everywhere else a folded unit is the source unit at the same distance).
 */
interface FoldedText {
  readonly text: string;
  readonly sourceStart: number[];
  readonly sourceEnd: number[];
  readonly foldedStart: number[];
  readonly foldedEnd: number[];
}

// ignoreBOM: a leading U+FEFF is text like any other; dropping it would shift every index after it.
const utf16 = new TextDecoder('utf-16le', { ignoreBOM: true });

/**
 * The per-character NFKC fold of `text`, in one pass over its UTF-16 units: one-unit folds are
 * made in place; only the (rarer) folds that change the length are recorded for mapping back.
 */
function foldForMatching(text: string, table: Folding): FoldedText {
  const units = new Uint16Array(text.length);
  Buffer.from(units.buffer).write(text, 'utf16le');
  const { unitFolds, hasLongFold, longFolds } = table;
  const longAt: number[] = [];
  for (let index = 0; index < units.length; index++) {
    const unit = units[index]!;
    if (unit < 0x80) continue;
    const fold = unitFolds[unit]!;
    if (fold !== 0) units[index] = fold;
    else if (hasLongFold[unit] === 1) longAt.push(index);
  }
  const sourceStart: number[] = [];
  const sourceEnd: number[] = [];
  const foldedStart: number[] = [];
  const foldedEnd: number[] = [];
  if (longAt.length === 0) return { text: utf16.decode(units), sourceStart, sourceEnd, foldedStart, foldedEnd };
  const out = new Uint16Array(units.length + longAt.length * table.longestFold);
  let length = 0;
  let copied = 0;
  for (const index of longAt) {
    const point = text.codePointAt(index)!;
    const fold = longFolds.get(point);
    // A high surrogate is marked when SOME character it starts folds; this one may not.
    if (fold === undefined) continue;
    const width = point > 0xffff ? 2 : 1;
    out.set(units.subarray(copied, index), length);
    length += index - copied;
    sourceStart.push(index);
    sourceEnd.push(index + width);
    foldedStart.push(length);
    for (let at = 0; at < fold.length; at++) out[length++] = fold.charCodeAt(at);
    foldedEnd.push(length);
    copied = index + width;
  }
  out.set(units.subarray(copied), length);
  length += units.length - copied;
  return { text: utf16.decode(out.subarray(0, length)), sourceStart, sourceEnd, foldedStart, foldedEnd };
}

/**
 * Where, in the source, the character that gave folded unit `at` starts (`edge: 'start'`) or ends
 * (`'end'`). A fold may be several units long (`…` → `...`): any of them maps to its whole character.
 */
function sourceIndex(folded: FoldedText, at: number, edge: 'start' | 'end'): number {
  let low = 0;
  let high = folded.foldedStart.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (folded.foldedStart[middle]! <= at) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  if (found !== -1 && at < folded.foldedEnd[found]!) return edge === 'start' ? folded.sourceStart[found]! : folded.sourceEnd[found]!;
  // A unit outside every long fold is one source unit (no token character is a surrogate).
  const source = found === -1 ? at : folded.sourceEnd[found]! + (at - folded.foldedEnd[found]!);
  return edge === 'start' ? source : source + 1;
}

/** Every bracket, and every character that folds to one, in `text` replaced by the look-alike of its fold. */
function escapeFoldedBrackets(text: string, table: Folding): string {
  return text.replace(table.brackets, (character) => {
    const fold = table.unitFolds[character.charCodeAt(0)]!;
    return escapeAsciiBrackets(fold === 0 ? character : String.fromCharCode(fold));
  });
}

/** Escapes every token the per-character fold of `text` holds. */
function neutraliseFolded(text: string): string {
  const table = foldingTable();
  const folded = foldForMatching(text, table);
  let result = '';
  let kept = 0;
  for (const match of folded.text.matchAll(CONTROL_TOKENS)) {
    const start = Math.max(kept, sourceIndex(folded, match.index, 'start'));
    const end = sourceIndex(folded, match.index + match[0].length - 1, 'end');
    result += text.slice(kept, start) + escapeFoldedBrackets(text.slice(start, end), table);
    kept = end;
  }
  return kept === 0 ? text : result + text.slice(kept);
}

const NON_ASCII = /[^\x00-\x7F]/;

/**
 * Escape every chat-template control token, as the text reads and as it reads after NFKC.
 * Idempotent. Clean text (the common case) is returned as the very same string: ASCII text with
 * nothing allocated; other text after one native NFKC pass to look at.
 */
export function neutraliseControlTokens(text: string): string {
  const normalised = NON_ASCII.test(text) ? text.normalize('NFKC') : text;
  // Text that NFKC leaves as it is holds no character that folds (one that does can never stand in
  // NFKC text), so it reads the same either way.
  if (normalised === text) return CONTROL_TOKEN.test(text) ? text.replace(CONTROL_TOKENS, escapeAsciiBrackets) : text;
  if (!CONTROL_TOKEN.test(text) && !CONTROL_TOKEN.test(normalised)) return text;
  return neutraliseFolded(text);
}

/**
 * Model-facing hygiene for tool output. A tool's content is data, not conversation: it must not be
 * able to open a new chat turn (control tokens) or close the quarantine envelope around it.
 *
 * Escape format: the ASCII brackets of a matched token are replaced by look-alikes that no
 * tokenizer treats as special — `<` → `‹` (U+2039), `>` → `›` (U+203A), `[` → `［` (U+FF3B),
 * `]` → `］` (U+FF3D). So `<|im_start|>` becomes `‹|im_start|›`, `[INST]` becomes `［INST］` and
 * `<<SYS>>` becomes `‹‹SYS››`. The token stays readable for a human or a model reading the output,
 * the original token never survives, and since the replacements are not ASCII no new token can form:
 * applying the escape twice equals applying it once.
 *
 * Matching is ASCII case-insensitive (`<|IM_START|>` is escaped too): tokenizers are case-sensitive,
 * but an attacker probing a model with near-miss spellings should not be rewarded, and false
 * positives only cost a harmless re-bracketing.
 */

/**
 * The chat-template control tokens we neutralise:
 * - every `<|name|>` token — ChatML (`im_start`, `im_end`), `endoftext`, Llama 3 (`start_header_id`,
 *   `end_header_id`, `eot_id`, …), Harmony (`start`, `channel`, `message`, `end`, `call`, `return`,
 *   `constrain`) and their relatives; a general shape rather than a list, so a new template's tokens
 *   are covered without an edit;
 * - Mistral / Llama 2 square-bracket tokens: `[INST]`, `[/INST]` and the Mistral tool/system family;
 * - Llama 2 `<<SYS>>`, `<</SYS>>`; Gemma `<start_of_turn>`, `<end_of_turn>`.
 */
const CONTROL_TOKEN_SOURCE = [
  String.raw`<\|[\w.-]{1,64}\|>`,
  String.raw`\[\/?(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]`,
  String.raw`<<\/?SYS>>`,
  String.raw`<(?:start|end)_of_turn>`,
].join('|');

// Two instances on purpose: the non-global one is for `.test` (a global regex would carry
// `lastIndex` between calls); `replace` with the global one always starts from 0.
const CONTROL_TOKEN = new RegExp(CONTROL_TOKEN_SOURCE, 'i');
const CONTROL_TOKENS = new RegExp(CONTROL_TOKEN_SOURCE, 'gi');

const LOOKALIKE: Readonly<Record<string, string>> = {
  '<': '\u2039',
  '>': '\u203A',
  '[': '\uFF3B',
  ']': '\uFF3D',
};

function escapeBrackets(token: string): string {
  return token.replace(/[<>[\]]/g, (bracket) => LOOKALIKE[bracket] ?? bracket);
}

/**
 * Escape every chat-template control token. Idempotent. Clean text (the common case) is returned
 * as the very same string, with nothing allocated.
 */
export function neutraliseControlTokens(text: string): string {
  if (!CONTROL_TOKEN.test(text)) return text;
  return text.replace(CONTROL_TOKENS, escapeBrackets);
}

export const QUARANTINE_OPEN = '<tool_output_quarantine>';
export const QUARANTINE_CLOSE = '</tool_output_quarantine>';

const ENVELOPE_HEAD = `${QUARANTINE_OPEN}\n`;
const ENVELOPE_TAIL = `\n${QUARANTINE_CLOSE}`;

/** UTF-8 bytes the envelope adds around its content (the tags and their two newlines). */
export const quarantineOverheadBytes = Buffer.byteLength(ENVELOPE_HEAD + ENVELOPE_TAIL, 'utf8');

/**
 * Anything that could be read as an envelope tag: opening or closing, any case, whitespace around
 * the slash or before `>`, even with trailing attributes or no `>` at all. Neutralising the `<`
 * (and a directly following `>`) is enough to stop it from being a tag.
 */
const QUARANTINE_TAG_SOURCE = String.raw`<(\s*\/?\s*tool_output_quarantine\s*)(>?)`;
const QUARANTINE_TAG = new RegExp(QUARANTINE_TAG_SOURCE, 'i');
const QUARANTINE_TAGS = new RegExp(QUARANTINE_TAG_SOURCE, 'gi');

/**
 * Escape every envelope tag in text that is meant to sit INSIDE an envelope, with the same
 * look-alike brackets as control tokens. Idempotent; clean text is returned as is.
 */
export function neutraliseQuarantineTags(text: string): string {
  if (!QUARANTINE_TAG.test(text)) return text;
  return text.replace(
    QUARANTINE_TAGS,
    (_tag, inside: string, close: string) => `${LOOKALIKE['<']}${inside}${close === '' ? '' : LOOKALIKE['>']}`,
  );
}

/** The inside of a clean envelope, or `null` when `text` is not one. */
export function quarantinedContent(text: string): string | null {
  if (text.length < ENVELOPE_HEAD.length + ENVELOPE_TAIL.length) return null;
  if (!text.startsWith(ENVELOPE_HEAD) || !text.endsWith(ENVELOPE_TAIL)) return null;
  const inside = text.slice(ENVELOPE_HEAD.length, text.length - ENVELOPE_TAIL.length);
  return QUARANTINE_TAG.test(inside) ? null : inside;
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

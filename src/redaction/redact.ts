import { countCharacters, unitsOfCharacters } from './characters.ts';
import { EMAIL_ADDRESS, maskShapes, SECRET_SHAPES, type SecretShape } from './patterns.ts';

export { countCharacters } from './characters.ts';
export { isCredentialName } from './credentials.ts';
export { MASK } from './patterns.ts';

/**
 * The redactor of the persisted copy (DESIGN.md section 7, level REDACTED): the catalogue's secret
 * shapes (patterns.ts) and e-mail addresses in free text become `***`, then the text is capped. Pure
 * and allocation-shy: it runs over every string leaf of every stored step. Lengths count characters
 * (code points), not UTF-16 units. The shapes and the credential names are the catalogue's; this file
 * only adds the e-mail shape (personal data, hidden in the stored copy only) and the cap.
 */

/** Longest redacted string, in characters, before the truncation suffix. */
export const REDACTED_MAX_CHARS = 2_000;
export const TRUNCATION_SUFFIX = '… [truncated]';

const PRIVACY_SHAPES: readonly SecretShape[] = [...SECRET_SHAPES, EMAIL_ADDRESS];

/**
 * The shapes masked until nothing more matches: one pass can leave a new match behind (a mask
 * joining what was around it into a URL with userinfo, found by the fuzz test), and `redact` must
 * be idempotent. Clean text costs one pass; text with secrets one more to confirm. A text still
 * changing after a few passes fails closed.
 */
function maskSecrets(text: string): string {
  let current = maskShapes(text, PRIVACY_SHAPES);
  if (current === text) return current;
  for (let pass = 0; pass < 4; pass++) {
    const again = maskShapes(current, PRIVACY_SHAPES);
    if (again === current) return current;
    current = again;
  }
  return '*'.repeat(Math.min(countCharacters(current), REDACTED_MAX_CHARS));
}

/** Exactly `chars` characters: cut, or padded with `*` (the pad only ever follows a mask). */
function fitCharacters(text: string, chars: number): string {
  const units = unitsOfCharacters(text, chars);
  if (units < text.length) return text.slice(0, units);
  const have = countCharacters(text);
  return have < chars ? text + '*'.repeat(chars - have) : text;
}

/**
 * The cap, applied to already masked text. A cut can complete a shape that the following characters
 * had kept from matching (`AKIA` + 16 followed by more letters, a header whose value was cut to its
 * scheme word), so the cut body is masked again; a body that shrank is padded with `*` back to the
 * cap, which keeps `redact(redact(x)) === redact(x)`.
 */
function capRedacted(masked: string): string {
  const end = unitsOfCharacters(masked, REDACTED_MAX_CHARS);
  if (end >= masked.length) return masked;
  let body = masked.slice(0, end);
  for (let attempt = 0; attempt < 4; attempt++) {
    const capped = body + TRUNCATION_SUFFIX;
    const again = maskSecrets(capped);
    if (again === capped) return capped;
    if (!again.endsWith(TRUNCATION_SUFFIX)) break;
    body = fitCharacters(again.slice(0, -TRUNCATION_SUFFIX.length), REDACTED_MAX_CHARS);
  }
  // Not reached by any input we know of; fail closed rather than store something unstable.
  return '*'.repeat(REDACTED_MAX_CHARS) + TRUNCATION_SUFFIX;
}

/**
 * Free text with secrets hidden, for the REDACTED level: vendor keys and tokens (OpenAI/Anthropic,
 * GitHub, AWS key ids, Google, Slack, Stripe, SendGrid, Airlock), JWTs, PEM private keys, `Bearer`
 * and `Basic` credentials, credential parameters and assignments (`token=`, `api_key=`, `sig=`,
 * `password: …`, `"password": "…"` in JSON text), URL userinfo passwords and e-mail addresses become
 * `***` (names, schemes and `Bearer` stay readable). Model
 * ids, UUIDs, hex digests, paths, versions, dates and IPs are left alone. The result is capped at
 * 2 000 characters plus `… [truncated]`, never splitting a surrogate pair. Idempotent; linear time.
 */
export function redact(text: string): string {
  if (text.length > CLEAN_MEMO_MAX_LENGTH) return capRedacted(maskSecrets(text));
  if (cleanNames.has(text)) return text;
  const redacted = capRedacted(maskSecrets(text));
  if (redacted === text) {
    if (cleanNames.size >= CLEAN_MEMO_SIZE) cleanNames.clear();
    cleanNames.add(text);
  }
  return redacted;
}

/**
 * Short strings known to come out of `redact` unchanged: tool names, finish reasons and the like
 * recur in every step, and each pass runs every secret shape. Only strings with nothing to mask
 * are remembered (never a secret); the set is bounded by clearing it when full.
 */
const cleanNames = new Set<string>();
const CLEAN_MEMO_SIZE = 1_000;
const CLEAN_MEMO_MAX_LENGTH = 128;


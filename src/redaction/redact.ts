import { wordsOf } from './masking.ts';

/**
 * The redactor of the persisted copy (DESIGN.md section 7, level REDACTED): secret shapes, e-mail
 * addresses and credential values in free text become `***`, then the text is capped. Pure and
 * allocation-shy: it runs over every string leaf of every stored step. Lengths count characters
 * (code points), not UTF-16 units.
 */

/** What a masked secret, e-mail address or credential value becomes. */
export const MASK = '***';
/** Longest redacted string, in characters, before the truncation suffix. */
export const REDACTED_MAX_CHARS = 2_000;
export const TRUNCATION_SUFFIX = '… [truncated]';

/** Characters (code points) of `text`; same as `[...text].length` without building the array. */
export function countCharacters(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

/** The UTF-16 index just after the first `max` characters (or the length when shorter). */
function unitsOfCharacters(text: string, max: number): number {
  let units = 0;
  for (let chars = 0; chars < max && units < text.length; chars++) {
    const unit = text.charCodeAt(units);
    const next = text.charCodeAt(units + 1);
    units += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return units;
}

const ALL_MASKED = /^\*+$/;
const isMasked = (value: string): boolean => ALL_MASKED.test(value);

/** Last words that make a parameter, JSON member or object key a credential. */
const CREDENTIAL_WORDS = new Set([
  'key', 'apikey', 'token', 'secret', 'password', 'passwd', 'pwd', 'pass', 'passphrase', 'auth', 'authorization',
  'signature', 'sig', 'credential', 'credentials', 'session', 'sessionid', 'cookie',
]);
/** Endings of the compacted name (`accesstoken`, `PGPASSWORD`, `session_id`). `tokens` is not one: `max_tokens` is a count. */
const CREDENTIAL_ENDINGS = ['apikey', 'accesskey', 'secretkey', 'privatekey', 'token', 'secret', 'password', 'passwd', 'passphrase', 'signature', 'credential', 'sessionid'];

/** A cheap first look: every credential name contains one of these. */
const CREDENTIAL_HINT = /key|token|secret|pass|pwd|auth|sig|credential|session|cookie/i;

/**
 * True for a name whose value is a credential (`api_key`, `access_token`, `X-Amz-Signature`,
 * `DB_PASSWORD`, `password_hash`), judged on its LAST word so counts such as `token_count` and
 * `max_tokens` stay readable. Errs on hiding: `key` alone counts, so `sort_key=name` is masked.
 */
export function isCredentialName(name: string): boolean {
  if (!CREDENTIAL_HINT.test(name)) return false;
  const words = wordsOf(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  const compact = words.join('');
  return CREDENTIAL_WORDS.has(last) || CREDENTIAL_ENDINGS.some((ending) => compact.endsWith(ending)) || /pass(?:word|wd|phrase)/.test(compact);
}

/** A credential value with its auth scheme kept (`Bearer ***`); an already masked value is left alone. */
function maskCredentialValue(value: string): string {
  const scheme = /^(?:bearer|basic|token|digest)\s+/i.exec(value)?.[0] ?? '';
  const rest = value.slice(scheme.length);
  return rest === '' || isMasked(rest) ? value : `${scheme}${MASK}`;
}

/** A parameter value, masked up to its trailing punctuation (`token=abc).` → `token=***).`). */
function maskParameterValue(value: string): string {
  const trailing = /[.,;:!?)\]}]+$/.exec(value)?.[0] ?? '';
  if (trailing.length === value.length) return maskCredentialValue(value);
  return maskCredentialValue(value.slice(0, value.length - trailing.length)) + trailing;
}

/**
 * `Bearer <token>` in free text: anything but an ordinary word is a token. A word (`of`, `bonds`,
 * `Authentication`) is letters only, lower case after the first, under 20 characters; a token has
 * digits, symbols, capitals inside or length (`abc123`, `TOKEN`, `eyJ…`, `sk-…`).
 */
function looksLikeBearerToken(token: string): boolean {
  return token.length >= 20 || !/^[A-Za-z][a-z]*$/.test(token);
}

/** Receives the match and its groups (an optional group that did not take part is undefined). */
type Replacer = (match: string, ...groups: (string | undefined)[]) => string;

/**
 * The secret shapes, applied in order. Rules of the house, for speed and for idempotence:
 * - every pattern starts behind a negative lookbehind, so a long run of look-alike characters is
 *   scanned once, not once per position (no quadratic scans, no nested overlapping quantifiers);
 * - no character class contains `…`, so no pattern runs into the truncation suffix;
 * - a replacement never contains anything a pattern matches, and values that are already `***`
 *   are left as they are.
 */
const SECRET_SHAPES: readonly { readonly name: string; readonly pattern: RegExp; readonly replace: Replacer }[] = [
  {
    // scheme://user:PASSWORD@host. A raw `/` cannot be part of a userinfo (it ends the authority).
    name: 'url-userinfo',
    pattern: /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s@/]*)@/g,
    replace: (_match, scheme, user) => `${scheme!}${user!}:${MASK}@`,
  },
  {
    // Authorization-style headers, HTTP or JSON spelling: the scheme word stays, the credential goes.
    name: 'auth-header',
    pattern:
      /(?<![A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|x-goog-api-key)(["']?[ \t]*[:=][ \t]*["']?)(?:(basic|bearer|token|digest)([ \t]+))?([^\s"'`,;&<>\\…]+)/gi,
    replace: (match, name, separator, scheme, space, value) =>
      isMasked(value!) ? match : `${name}${separator}${scheme ?? ''}${space ?? ''}${MASK}`,
  },
  {
    name: 'bearer',
    pattern: /(?<![A-Za-z0-9_-])(bearer)([ \t]+)([A-Za-z0-9._~+/-]+=*)/gi,
    replace: (match, word, space, token) => (looksLikeBearerToken(token!) ? `${word}${space}${MASK}` : match),
  },
  // OpenAI and Anthropic keys (`sk-`, `sk-proj-`, `sk-ant-`).
  { name: 'openai', pattern: /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g, replace: () => MASK },
  { name: 'stripe', pattern: /(?<![A-Za-z0-9])(?:(?:sk|rk|pk)_(?:live|test)|whsec)_[A-Za-z0-9]{16,}/g, replace: () => MASK },
  { name: 'github', pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, replace: () => MASK },
  // Exact shape: `AKIA` inside a longer word is not a key id.
  { name: 'aws', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, replace: () => MASK },
  { name: 'google', pattern: /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35,}/g, replace: () => MASK },
  { name: 'slack', pattern: /(?<![A-Za-z0-9])(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g, replace: () => MASK },
  { name: 'sendgrid', pattern: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}/g, replace: () => MASK },
  // JWS (three segments) and JWE (five): base64url, the header starting `eyJ` (`{"`).
  { name: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){1,3}/g, replace: () => MASK },
  {
    // `?api_key=…`, `&sig=…`, `DB_PASSWORD=…`, `--token=…`: the name stays, the value goes.
    name: 'credential-parameter',
    pattern: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})=([^\s"'`&#<>\\…]+)/g,
    replace: (match, name, value) => (isCredentialName(name!) ? `${name}=${maskParameterValue(value!)}` : match),
  },
  {
    // `"password": "…"` inside JSON text (tool results often are JSON).
    name: 'credential-json-member',
    pattern: /"([A-Za-z0-9_.-]{1,64})"(\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g,
    replace: (match, name, separator, value) => (isCredentialName(name!) ? `"${name}"${separator}"${maskCredentialValue(value!)}"` : match),
  },
  {
    // The whole address. A domain needs a dotted, alphabetic TLD, so `react@18.2.0` and `user@localhost` stay.
    name: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g,
    replace: () => MASK,
  },
];

function maskOnce(text: string): string {
  let result = text;
  for (const { pattern, replace } of SECRET_SHAPES) result = result.replace(pattern, replace as (match: string, ...rest: unknown[]) => string);
  return result;
}

/**
 * Passes until nothing changes: one shape's mask can expose another (a URL whose user part was an
 * e-mail address), and a fixed point is what makes `redact` idempotent. Two passes in practice.
 */
const MAX_MASK_PASSES = 6;

function maskSecrets(text: string): string {
  let current = text;
  for (let pass = 0; pass < MAX_MASK_PASSES; pass++) {
    const next = maskOnce(current);
    if (next === current) return current;
    current = next;
  }
  return current;
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
function capCharacters(masked: string): string {
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
 * GitHub, AWS key ids, Google, Slack, Stripe, SendGrid), JWTs, `Bearer` tokens, credential
 * parameters (`token=`, `api_key=`, `sig=`, … and `"password": "…"` in JSON text), URL userinfo
 * passwords and e-mail addresses become `***` (names, schemes and `Bearer` stay readable). Model
 * ids, UUIDs, hex digests, paths, versions, dates and IPs are left alone. The result is capped at
 * 2 000 characters plus `… [truncated]`, never splitting a surrogate pair. Idempotent; linear time.
 */
export function redact(text: string): string {
  if (text.length > CLEAN_MEMO_MAX_LENGTH) return capCharacters(maskSecrets(text));
  if (cleanNames.has(text)) return text;
  const redacted = capCharacters(maskSecrets(text));
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


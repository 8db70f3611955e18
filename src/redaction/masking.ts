/**
 * What the built-in tools hide before anything reaches a model: credential-like table columns,
 * secret-named environment variables, passwords in URLs and well-known secret shapes in free text.
 * These rules err on the side of hiding: a harmless value masked by mistake costs nothing, a secret
 * shown once is out for good.
 */

/** What a masked table cell shows. */
export const MASKED_CELL = '***';
/** What a redacted environment value shows. */
export const REDACTED_VALUE = '***redacted***';
/** What replaces a secret found inside free text (a password in a URL, a token in a log line). */
export const MASKED_SECRET = '***';

/** The words of an identifier, lower-cased: `apiKey`, `API_KEY` and `api-key` all give `api`, `key`. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/**
 * Fragments that mark a column as credential-like wherever they appear in its normalized name
 * (lower-cased, separators removed), so `password_hash`, `PasswordHash` and `user_api_key` match.
 */
const CREDENTIAL_FRAGMENTS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'accesskey',
  'privatekey',
  'credential',
  'hash',
  'salt',
  'session',
  'cookie',
  'authorization',
  'signingkey',
  'encryptionkey',
];

/**
 * Short marks that only count as a whole word (`otp`, `user_pin`) — as fragments they would hit
 * ordinary names (`footprint`, `shipping`).
 */
const CREDENTIAL_WORDS = new Set(['otp', 'totp', 'hotp', 'mfa', 'pwd', 'pin', 'cvv', 'cvc', 'pass', 'auth']);

/** True for a column whose values are credentials or derived from them; its cells are masked. */
export function isCredentialColumn(name: string): boolean {
  const words = wordsOf(name);
  const compact = words.join('');
  return CREDENTIAL_FRAGMENTS.some((fragment) => compact.includes(fragment)) || words.some((word) => CREDENTIAL_WORDS.has(word));
}

/** Fragments that make an environment variable secret wherever they appear in its upper-cased name. */
const SECRET_ENV_FRAGMENTS = ['SECRET', 'TOKEN', 'PASSWORD', 'PASSWD', 'PASSPHRASE', 'CREDENTIAL', 'PRIVATE', 'APIKEY', 'ACCESSKEY'];

/** Whole words of an environment variable name that make it secret (`DB_PASS`, `AIRLOCK_MASTER_KEY`). */
const SECRET_ENV_WORDS = new Set(['KEY', 'KEYS', 'PASS', 'PWD', 'AUTH', 'SALT', 'COOKIE', 'SESSION', 'SIGNATURE', 'DSN', 'CERT', 'PEM']);

/**
 * True for a variable whose value must never be shown by `get_env`: names carrying a secret word,
 * and connection strings (`DATABASE_URL`, `*_DATABASE_URL`, `*_CONNECTION_STRING`, `*_DSN`), which
 * embed credentials more often than not.
 */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  // The shell's working directories, not passwords.
  if (upper === 'PWD' || upper === 'OLDPWD') return false;
  const words = upper.split(/[^A-Z0-9]+/).filter((word) => word.length > 0);
  if (SECRET_ENV_FRAGMENTS.some((fragment) => upper.includes(fragment))) return true;
  if (words.some((word) => SECRET_ENV_WORDS.has(word))) return true;
  return upper.includes('DATABASE_URL') || upper.includes('CONNECTION_STRING');
}

/**
 * `scheme://user:password@host` → `scheme://user:***@host`. The password runs to the last `@`
 * before whitespace, so an unencoded `/` or `:` inside it is masked too (at worst a little more
 * than the password is hidden, never less).
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#]*):([^\s@]*)@/gi;

export function maskUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, (_match, scheme: string, user: string) => `${scheme}${user}:${MASKED_SECRET}@`);
}

/**
 * Well-known secret shapes, each replaced by `***` (a kept prefix stays readable so a human knows
 * what kind of secret was there). Long enough minimums keep ordinary words (`sk-learn`) intact.
 */
const SECRET_SHAPES: readonly { readonly pattern: RegExp; readonly keep: (match: string, ...groups: string[]) => string }[] = [
  // `Authorization: Bearer <token>` and `Basic <base64>` (the scheme stays).
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, keep: (_m, scheme) => `${scheme} ${MASKED_SECRET}` },
  // OpenAI / Anthropic (`sk-`, `sk-proj-`, `sk-ant-`) keys.
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, keep: () => `sk-${MASKED_SECRET}` },
  // Stripe secret and restricted keys.
  { pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g, keep: () => MASKED_SECRET },
  // GitHub tokens.
  { pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, keep: () => MASKED_SECRET },
  // AWS access key ids, Google API keys, Slack tokens, SendGrid keys.
  { pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, keep: () => MASKED_SECRET },
  { pattern: /\bAIza[0-9A-Za-z_-]{35}/g, keep: () => MASKED_SECRET },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, keep: () => MASKED_SECRET },
  { pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g, keep: () => MASKED_SECRET },
  // JSON Web Tokens.
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g, keep: () => MASKED_SECRET },
  // Airlock's own bearer tokens (see services/users.ts).
  { pattern: /\balk_[A-Za-z0-9_-]{20,}/g, keep: () => `alk_${MASKED_SECRET}` },
  // Credential parameters: `password=…`, `api_key=…`, `access_token: …` (the name stays).
  {
    pattern:
      /\b([A-Za-z0-9_-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|signature|sig)["']?\s*[=:]\s*["']?)[^\s"'&,;]+/gi,
    keep: (_m, name) => `${name}${MASKED_SECRET}`,
  },
];

/**
 * Free text with secrets hidden: URL passwords and the known secret shapes above. Used for
 * environment values that are not secret-named and for every log line.
 */
export function redactSecrets(text: string): string {
  let result = maskUrlCredentials(text);
  for (const { pattern, keep } of SECRET_SHAPES) {
    result = result.replace(pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.filter((item): item is string => typeof item === 'string');
      return keep(match, ...groups);
    });
  }
  return result;
}

/** An environment value as `get_env` shows it. */
export function redactEnvValue(name: string, value: string): string {
  return isSecretEnvName(name) ? REDACTED_VALUE : redactSecrets(value);
}

/** Longest table cell shown, in characters (code points), the `…` included. */
export const MAX_CELL_CHARS = 300;

/**
 * `text` cut to at most `maxChars` code points, ending with `…` when cut. Never splits a surrogate
 * pair. Cheap for huge cells: it stops counting at the cap.
 */
export function capCell(text: string, maxChars: number = MAX_CELL_CHARS): string {
  // Code points never outnumber UTF-16 units.
  if (text.length <= maxChars) return text;
  let units = 0;
  let keepUnits = 0;
  for (let chars = 0; chars < maxChars; chars++) {
    if (units >= text.length) return text;
    if (chars === maxChars - 1) keepUnits = units;
    units += text.codePointAt(units)! > 0xffff ? 2 : 1;
  }
  if (units >= text.length) return text;
  // Over the cap: keep maxChars - 1 characters, then the ellipsis.
  return `${text.slice(0, keepUnits)}…`;
}

/**
 * What the built-in data tools hide before anything reaches a model: credential-like table columns,
 * secret-named environment variables and secret shapes in free text (cells, values, log lines). The
 * names and the shapes are the catalogue's (credentials.ts, patterns.ts); this file only says how
 * the tools show what they hide. These rules err on the side of hiding: a harmless value masked by
 * mistake costs nothing, a secret shown once is out for good.
 */
import { capCharacters } from './characters.ts';
import { isSecretEnvName } from './credentials.ts';
import { MASK, maskShapes, SECRET_SHAPES } from './patterns.ts';

export { isCredentialColumn, isSecretEnvName, wordsOf } from './credentials.ts';

/** What a masked table cell shows. */
export const MASKED_CELL = MASK;
/** What a redacted environment value shows. */
export const REDACTED_VALUE = '***redacted***';
/** What replaces a secret found inside free text (a password in a URL, a token in a log line). */
export const MASKED_SECRET = MASK;

const URL_USERINFO = SECRET_SHAPES.filter((shape) => shape.name === 'url-userinfo');

/** `scheme://user:password@host` → `scheme://user:***@host`, and nothing else masked. */
export function maskUrlCredentials(text: string): string {
  return maskShapes(text, URL_USERINFO);
}

/**
 * Free text with every secret shape of the catalogue masked (URL passwords, vendor keys, JWTs,
 * bearer credentials, credential parameters…). E-mail addresses are not secrets and stay. Used for
 * environment values that are not secret-named, table cells and log lines.
 */
export function redactSecrets(text: string): string {
  return maskShapes(text, SECRET_SHAPES);
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
  return capCharacters(text, maxChars);
}

/**
 * A table cell as a data tool shows it: secret shapes masked FIRST (so a secret the cap would cut
 * is never half-shown), then capped.
 */
export function maskCell(text: string, maxChars: number = MAX_CELL_CHARS): string {
  return capCell(redactSecrets(text), maxChars);
}

/**
 * THE list of credential names: the one vocabulary that says a column, an object key, a URL or
 * command-line parameter, a header, an environment variable or a log field holds a secret. The data
 * tools (masked columns, redacted variables), the privacy redactor (credential-named keys and
 * parameters) and the logger (redacted fields) all judge names from this list; no other file keeps
 * one (test/redaction/single-catalogue.test.ts fails if one appears).
 *
 * A name is judged on its words, lower-cased (`apiKey`, `API_KEY` and `api-key` all give `api`,
 * `key`), and on its compact form (the words joined: `apikey`).
 */

/** The words of an identifier, lower-cased: `apiKey`, `API_KEY` and `api-key` all give `api`, `key`. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

export interface CredentialTerm {
  /** Words joined by `_`, lower case: `api_key` stands for `apiKey`, `API_KEY`, `api-key` and `apikey`. */
  readonly term: string;
  /**
   * `part`: counts as part of a longer name (`password` in `db_password_hash`); `word`: only as a
   * whole word, since as a part it would hit ordinary names (`pin` in `shipping`, `key` in `monkey`).
   */
  readonly match: 'part' | 'word';
  /**
   * `value`: a value under this name IS a credential, so it counts everywhere: table columns,
   * environment variables, object keys, parameters, headers, log fields. `related`: derived from one
   * or pointing at one (a hash, a salt, a certificate, a connection string): it counts only where a
   * whole value is hidden on suspicion (table columns and environment variables), not for keys and
   * parameters in free text, where `hash=<sha256>` or `private: true` is ordinary data.
   */
  readonly kind: 'value' | 'related';
  /**
   * For the strict judgement (`isCredentialName`), a `part` term must END the name (`access_token`,
   * not `token_count`); an `anywhere` term may sit anywhere in it (`password_hash`, `passwordReset`).
   */
  readonly anywhere?: true;
}

/**
 * The union of every list the service used to keep (table columns, environment variables, the
 * privacy redactor's keys, the logger's fields). `private` alone is not a term: `is_private` is a
 * flag, and `private_key` / `SSH_PRIVATE_KEY_PATH` are caught by `private_key` and `key`.
 */
export const CREDENTIAL_TERMS: readonly CredentialTerm[] = [
  { term: 'password', match: 'part', kind: 'value', anywhere: true },
  { term: 'passwd', match: 'part', kind: 'value', anywhere: true },
  { term: 'passphrase', match: 'part', kind: 'value', anywhere: true },
  { term: 'secret', match: 'part', kind: 'value' },
  // `token` must END a name in the strict sense: `max_tokens` and `token_count` are counts.
  { term: 'token', match: 'part', kind: 'value' },
  { term: 'api_key', match: 'part', kind: 'value' },
  { term: 'access_key', match: 'part', kind: 'value' },
  { term: 'secret_key', match: 'part', kind: 'value' },
  { term: 'private_key', match: 'part', kind: 'value' },
  { term: 'signing_key', match: 'part', kind: 'value' },
  { term: 'encryption_key', match: 'part', kind: 'value' },
  { term: 'credential', match: 'part', kind: 'value' },
  { term: 'credentials', match: 'part', kind: 'value' },
  { term: 'authorization', match: 'part', kind: 'value' },
  { term: 'signature', match: 'part', kind: 'value' },
  { term: 'cookie', match: 'part', kind: 'value' },
  { term: 'session', match: 'part', kind: 'value' },
  { term: 'session_id', match: 'part', kind: 'value' },
  { term: 'ciphertext', match: 'part', kind: 'value' },
  // graphql-ws connection parameters carry the bearer token.
  { term: 'connection_params', match: 'part', kind: 'value' },
  { term: 'key', match: 'word', kind: 'value' },
  { term: 'pass', match: 'word', kind: 'value' },
  { term: 'pwd', match: 'word', kind: 'value' },
  { term: 'auth', match: 'word', kind: 'value' },
  { term: 'sig', match: 'word', kind: 'value' },
  { term: 'pin', match: 'word', kind: 'value' },
  { term: 'otp', match: 'word', kind: 'value' },
  { term: 'totp', match: 'word', kind: 'value' },
  { term: 'hotp', match: 'word', kind: 'value' },
  { term: 'mfa', match: 'word', kind: 'value' },
  { term: 'cvv', match: 'word', kind: 'value' },
  { term: 'cvc', match: 'word', kind: 'value' },
  { term: 'dsn', match: 'word', kind: 'value' },
  { term: 'hash', match: 'part', kind: 'related' },
  { term: 'salt', match: 'part', kind: 'related' },
  { term: 'database_url', match: 'part', kind: 'related' },
  { term: 'connection_string', match: 'part', kind: 'related' },
  { term: 'keys', match: 'word', kind: 'related' },
  { term: 'cert', match: 'word', kind: 'related' },
  { term: 'pem', match: 'word', kind: 'related' },
];

const compactOf = (term: string): string => term.replace(/_/g, '');

interface TermSets {
  readonly parts: readonly string[];
  readonly words: ReadonlySet<string>;
}

function termSets(filter: (term: CredentialTerm) => boolean): TermSets {
  const chosen = CREDENTIAL_TERMS.filter(filter);
  return {
    parts: chosen.filter((term) => term.match === 'part').map((term) => compactOf(term.term)),
    words: new Set(chosen.filter((term) => term.match === 'word').map((term) => term.term)),
  };
}

const EVERY_TERM = termSets(() => true);
const VALUE_ENDINGS = termSets((term) => term.kind === 'value' && !term.anywhere);
const VALUE_ANYWHERE = termSets((term) => term.kind === 'value' && term.anywhere === true);

/**
 * A cheap first look: a credential name's compact form (lower case, letters and digits only; the
 * same letters `wordsOf` keeps) contains the compact form of some `value` term.
 */
const CREDENTIAL_HINT = new RegExp(CREDENTIAL_TERMS.filter((term) => term.kind === 'value').map((term) => compactOf(term.term)).join('|'));
const roughCompact = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '');

/**
 * True for a name whose VALUE is a credential (`api_key`, `access_token`, `X-Amz-Signature`,
 * `DB_PASSWORD`, `password_hash`, `session_id`): used for object keys, parameters, headers and log
 * fields. A `part` term must end the name and a `word` term be its last word, so counts such as
 * `token_count` and `max_tokens` stay readable; the password family counts anywhere. Errs on hiding:
 * `key` alone counts, so `sort_key=name` is masked.
 */
export function isCredentialName(name: string): boolean {
  if (!CREDENTIAL_HINT.test(roughCompact(name))) return false;
  const words = wordsOf(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  const compact = words.join('');
  return (
    VALUE_ENDINGS.words.has(last) ||
    VALUE_ENDINGS.parts.some((part) => compact.endsWith(part)) ||
    VALUE_ANYWHERE.parts.some((part) => compact.includes(part))
  );
}

/**
 * True for a name that may hold a credential or something derived from one, judged broadly: any
 * term, `part` terms anywhere in the name, `word` terms as any of its words. This is the rule for
 * hiding WHOLE values on suspicion: a table column (`password_hash`, `user_pin`, `mfa_secret`), whose
 * cells `read_records` masks.
 */
export function isCredentialColumn(name: string): boolean {
  const words = wordsOf(name);
  const compact = words.join('');
  return EVERY_TERM.parts.some((part) => compact.includes(part)) || words.some((word) => EVERY_TERM.words.has(word));
}

/** The shell's working directories, not passwords, though `pwd` is a credential word. */
const SHELL_DIRECTORY_VARIABLES = new Set(['PWD', 'OLDPWD']);

/**
 * True for an environment variable whose value `get_env` must never show: the same broad judgement
 * as for columns (`OPENAI_API_KEY`, `AIRLOCK_MASTER_KEY`, `DB_PASS`, `DATABASE_URL`, `SENTRY_DSN`,
 * `SSH_PRIVATE_KEY_PATH`), except the shell's `PWD` and `OLDPWD`.
 */
export function isSecretEnvName(name: string): boolean {
  if (SHELL_DIRECTORY_VARIABLES.has(name.toUpperCase())) return false;
  return isCredentialColumn(name);
}

/**
 * The log field names the logger censors before a line is even serialised (pino `redact` paths,
 * at the top level and one level down): every `value` term in its snake_case, camelCase and compact
 * spellings. The logger also censors credential-named fields at any depth after serialisation (see
 * `redactLogLine`); these paths are the cheap first pass.
 */
export function credentialLogPaths(): string[] {
  const names = new Set<string>();
  for (const { term, kind } of CREDENTIAL_TERMS) {
    if (kind !== 'value') continue;
    const words = term.split('_');
    names.add(term);
    names.add(words.join(''));
    names.add(words[0] + words.slice(1).map((word) => word[0]!.toUpperCase() + word.slice(1)).join(''));
  }
  const paths = [...names].sort();
  return [...paths, ...paths.map((name) => `*.${name}`), 'req.headers.authorization', 'req.headers.cookie'];
}

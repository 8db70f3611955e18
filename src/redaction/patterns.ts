import { isCredentialName } from './credentials.ts';

/**
 * THE list of secret shapes: what a secret looks like in free text. The privacy redactor (the stored
 * copy at REDACTED), the data tools (`get_env` values, `read_records` cells, `fetch_logs` lines) and
 * the logger (every line it writes) all mask with this list; no other file keeps one
 * (test/redaction/single-catalogue.test.ts fails if one appears).
 *
 * Each shape carries the samples that define it: `positives` it must mask (the `secret` part must be
 * gone, whatever surrounds it) and `negatives` it must leave alone. test/redaction/catalogue.test.ts
 * runs every sample through all three users; `ORDINARY_TEXT` holds the look-alikes no shape may touch
 * (model ids, UUIDs, digests, base64 of ordinary text, dates, `token` in prose). Fake secrets are
 * assembled at run time (`fake`) so that secret scanners do not flag this file.
 *
 * Rules of the house, for speed and for idempotence:
 * - every pattern starts behind a negative lookbehind or a fixed prefix, so a long run of look-alike
 *   characters is scanned once, not once per position (no quadratic scans, no nested overlapping
 *   quantifiers);
 * - no character class contains `…`, so no pattern runs into the redactor's truncation suffix, and
 *   none contains `"` or `\` where a value is replaced, so masking a JSON text (a log line) keeps it
 *   valid JSON;
 * - a replacement never contains anything a pattern matches, and values that are already `***` are
 *   left as they are.
 *
 * Over 300 lines on purpose: it is one table, the shapes in the order they are applied with the
 * samples that define them beside each; split, the order and the samples would drift apart.
 */

/** What a masked secret, e-mail address or credential value becomes. */
export const MASK = '***';

/** Receives the match and its groups (an optional group that did not take part is undefined). */
export type Replacer = (match: string, ...groups: (string | undefined)[]) => string;

export interface Sample {
  /** The text as it would appear (a log line, a cell, a message). */
  readonly text: string;
  /** The part of `text` that must be gone once masked. */
  readonly secret: string;
}

export interface SecretShape {
  readonly name: string;
  /** What it looks for (for a shape masked in two steps, the first step's pattern). */
  readonly pattern: RegExp;
  /** `text` with every occurrence of the shape masked. */
  readonly mask: (text: string) => string;
  readonly positives: readonly Sample[];
  readonly negatives: readonly string[];
}

interface ShapeSpec {
  readonly name: string;
  readonly pattern: RegExp;
  readonly replace: Replacer;
  readonly positives: readonly Sample[];
  readonly negatives: readonly string[];
}

/** A shape masked by one global regex and its replacer. */
function shape(spec: ShapeSpec): SecretShape {
  const { pattern, replace } = spec;
  return {
    name: spec.name,
    pattern,
    mask: (text) => text.replace(pattern, replace as (match: string, ...rest: unknown[]) => string),
    positives: spec.positives,
    negatives: spec.negatives,
  };
}

// ── samples

const ALNUM = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0UvWxYz';
/** A fake secret: `prefix` then `length` letters and digits. */
const fake = (prefix: string, length: number): string => prefix + ALNUM.repeat(4).slice(0, length);
/** A sample whose secret is the whole text, or sits between `before` and `after`. */
const sample = (secret: string, before = '', after = ''): Sample => ({ text: before + secret + after, secret });

const JWT_HEADER = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9';
const JWT = `${JWT_HEADER}.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`;
const PEM_BODY = 'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaGBir/JXHFOqV+I';
const pemKey = (label: string): string => `-----BEGIN ${label}PRIVATE KEY-----\n${PEM_BODY}\n-----END ${label}PRIVATE KEY-----`;

/**
 * Text no shape may touch, wherever it appears: the look-alikes of secrets that a model, a log or a
 * table is full of. Free of e-mail addresses (the privacy redactor masks those on purpose).
 */
export const ORDINARY_TEXT: readonly string[] = [
  'gpt-4o-mini',
  'claude-3-5-sonnet-20241022',
  'claude-opus-4-5-20251101 and gemini-2.0-flash-001, mistral-large-2411, llama3.1:70b, o3-mini-2025-01-31',
  '123e4567-e89b-12d3-a456-426614174000',
  'run 7f9c2d1e-8a4b-4c3d-9e2f-1a2b3c4d5e6f finished',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  // base64 of "The quick brown fox jumps over the lazy dog", of "Hello, world!" and of `{"a":1}`
  'VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==',
  'SGVsbG8sIHdvcmxkIQ==',
  'eyJhIjoxfQ==',
  '2024-08-06T12:34:56.789Z',
  '2024-08-06 12:34, 06/08/2024',
  'Each token costs money; the token budget is 4096 tokens per request.',
  'max_tokens=1024 token_count=512 tokenizer=cl100k_base',
  'prompt_tokens: 12, completion_tokens: 30',
  'The quick brown fox jumps over the lazy dog. It was the secret to good bread: time.',
  'the bearer of bad news; Bearer authentication is a scheme, and so is Basic authentication',
  'pip install sk-learn',
  'risk-assessment-2024-report-final-version and task-queue-processor-for-nightly-batch-jobs',
  '/var/lib/airlock/data/config.yaml',
  'https://example.com/search?q=cats&page=2&sort=asc',
  'https://example.com:8443/health',
  '1.2.3-beta.1+build.5 and react@18.2.0',
  '192.168.0.1, 10.0.0.254:8080, 2001:db8::1',
  'read_records',
];

// ── helpers of the replacements

const ALL_MASKED = /^\*+$/;
const isMasked = (value: string): boolean => ALL_MASKED.test(value);

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
function looksLikeToken(token: string): boolean {
  return token.length >= 20 || !/^[A-Za-z][a-z]*$/.test(token);
}

/**
 * A name and its separator: `api_key=`, `password = `, `client_secret: `. Not right after `//`: there
 * `user:password@` is a URL's userinfo, which `url-userinfo` masks.
 */
const ASSIGNMENT_NAME = /(?<![A-Za-z0-9_.-])(?<!\/\/)([A-Za-z0-9_.-]{1,64})([ \t]{0,8}[:=][ \t]{0,8})/g;
/** The value after a credential name's separator, read from where the name ended (sticky). */
const ASSIGNMENT_VALUE = /(["']?)(?:(bearer|basic|token|digest)([ \t]+))?([^\s"'`&#<>\\…]+)/iy;
/**
 * A value that is itself a list of parameters (`Cookie: session=…`): its own names are judged
 * instead. Base64 padding (`dGVzdA==`) is not a parameter.
 */
const PARAMETER_LIST = /^[A-Za-z0-9_.-]+=[^=]/;

/**
 * Every credential-named assignment with its value masked, in two steps so that nothing is skipped:
 * a name that is not a credential consumes only itself and its separator, so its value is judged as
 * a name in turn (`next=https://x?token=…`, `failed: password = …`); only a credential's value is
 * read at all. Linear: every name is at most 64 characters and every value is read once.
 */
function maskAssignments(text: string): string {
  let result = '';
  let kept = 0;
  ASSIGNMENT_NAME.lastIndex = 0;
  for (let name = ASSIGNMENT_NAME.exec(text); name !== null; name = ASSIGNMENT_NAME.exec(text)) {
    if (!isCredentialName(name[1]!)) continue;
    ASSIGNMENT_VALUE.lastIndex = ASSIGNMENT_NAME.lastIndex;
    const value = ASSIGNMENT_VALUE.exec(text);
    if (value === null) continue;
    const [, quote, scheme, space, secret] = value;
    if (isMasked(secret!) || PARAMETER_LIST.test(secret!)) continue;
    result += text.slice(kept, ASSIGNMENT_NAME.lastIndex) + quote + (scheme ?? '') + (space ?? '') + maskParameterValue(secret!);
    kept = ASSIGNMENT_NAME.lastIndex = ASSIGNMENT_VALUE.lastIndex;
  }
  return kept === 0 ? text : result + text.slice(kept);
}

// ── the shapes, applied in this order

export const SECRET_SHAPES: readonly SecretShape[] = [
  shape({
    // scheme://user:PASSWORD@host. The password may hold `:` and a few unencoded `/` (a leaked
    // password is worse than a masked port), never whitespace, `@`, quotes or backslashes.
    name: 'url-userinfo',
    pattern: /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s:@/"\\…]*):([^\s@/"\\…]*(?:\/[^\s@/"\\…]*){0,3})@/g,
    replace: (_match, scheme, user) => `${scheme!}${user!}:${MASK}@`,
    positives: [
      sample('hunter2', 'postgres://admin:', '@db.internal:5432/app'),
      sample('s3cret', 'redis://:', '@cache:6379/0'),
      sample('pa/ss:w', 'mongodb+srv://u:', '@cluster.example.net/db'),
      sample('guest-pw', 'see amqp://guest:', '@mq and more'),
    ],
    negatives: ['ssh://git@gitlab/repo', 'https://example.com/path', 'https://example.com:8443/health'],
  }),
  shape({
    // PEM private key blocks, from BEGIN to END (or to the end of the text when cut short: the
    // body alone is key material). A JSON escape (`\n`) in a log line is part of the body.
    name: 'pem-private-key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----END )(?:\\[^…]|[^"\\…]))*(?:-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----)?/g,
    replace: () => MASK,
    positives: [
      sample(PEM_BODY, '-----BEGIN RSA PRIVATE KEY-----\n', '\n-----END RSA PRIVATE KEY-----'),
      sample(pemKey('OPENSSH '), 'key: '),
      sample(pemKey('')),
      sample(PEM_BODY, 'truncated: -----BEGIN EC PRIVATE KEY-----\n'),
    ],
    negatives: ['-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----', '-----BEGIN PUBLIC KEY-----'],
  }),
  shape({
    // Authorization-style headers, HTTP or JSON spelling: the scheme word stays, the credential goes.
    name: 'auth-header',
    pattern:
      /(?<![A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|x-goog-api-key)(["']?[ \t]*[:=][ \t]*["']?)(?:(basic|bearer|token|digest)([ \t]+))?([^\s"'`,;&<>\\…]+)/gi,
    replace: (match, name, separator, scheme, space, value) =>
      isMasked(value!) ? match : `${name}${separator}${scheme ?? ''}${space ?? ''}${MASK}`,
    positives: [
      sample('abc123def456', 'Authorization: Bearer '),
      sample('tok', 'curl -H "Authorization: Bearer ', '" https://api.example.com'),
      sample('dXNlcjpwYXNzd29yZA==', 'authorization: Basic '),
      sample('k-9f8e7d6c', 'x-api-key: '),
      sample('q1w2e3r4', '{"X-Goog-Api-Key": "', '"}'),
    ],
    negatives: ['Authorization is required', 'the api-key header'],
  }),
  shape({
    // `Bearer <token>` / `Basic <credentials>` anywhere; ordinary words after them stay.
    name: 'bearer',
    pattern: /(?<![A-Za-z0-9_-])(bearer|basic)([ \t]+)([A-Za-z0-9._~+/-]+=*)/gi,
    replace: (match, scheme, space, token) =>
      looksLikeToken(token!) && (scheme!.toLowerCase() === 'bearer' || token!.length >= 8) ? `${scheme}${space}${MASK}` : match,
    positives: [sample('abc123xyz', 'header: bearer '), sample(JWT, 'send Bearer ', ' with it'), sample('dXNlcjpwYXNz', 'Basic ')],
    negatives: ['the bearer of bad news', 'Basic authentication, basic Auth'],
  }),
  shape({
    // OpenAI and Anthropic keys (`sk-`, `sk-proj-`, `sk-ant-`): 16 characters or more after `sk-`.
    name: 'openai',
    pattern: /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}/g,
    replace: () => MASK,
    positives: [sample(fake('sk-', 16), 'key '), sample(fake('sk-', 48)), sample(fake('sk-proj-', 56), '{"k":"', '"}'), sample(`${fake('sk-ant-api03-', 60)}-_x`)],
    negatives: ['pip install sk-learn', `${fake('sk-', 15)} is too short`, 'desk-lamp-with-a-long-hyphenated-name'],
  }),
  shape({
    name: 'stripe',
    pattern: /(?<![A-Za-z0-9])(?:(?:sk|rk|pk)_(?:live|test)|whsec)_[A-Za-z0-9]{16,}/g,
    replace: () => MASK,
    positives: [sample(fake('sk_live_', 24)), sample(fake('sk_test_', 24)), sample(fake('rk_live_', 24)), sample(fake('pk_live_', 24)), sample(fake('whsec_', 32))],
    negatives: ['sk_live_short', 'desk_test_suite'],
  }),
  shape({
    name: 'github',
    pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
    replace: () => MASK,
    positives: [
      sample(fake('ghp_', 36), 'push with ', ' please'),
      sample(fake('ghs_', 36)),
      sample(fake('gho_', 36)),
      sample(fake('ghu_', 36)),
      sample(fake('ghr_', 36)),
      sample(`${fake('github_pat_', 22)}_${fake('', 40)}`),
    ],
    negatives: ['ghp_short and gho_', 'github_pat_'],
  }),
  shape({
    // Exact shape: `AKIA` inside a longer word is not a key id.
    name: 'aws',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    replace: () => MASK,
    positives: [sample('AKIA' + 'IOSFODNN7EXAMPLE', 'aws key ', '.'), sample('ASIA' + 'Y34FZKBOKMUTVV7A', '{"AccessKeyId":"', '"}')],
    negatives: ['MAKIAVELLI and XAKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLEEXTRA'],
  }),
  shape({
    name: 'google',
    pattern: /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35,}/g,
    replace: () => MASK,
    positives: [sample(fake('AIza', 35), 'use ', ' for maps')],
    negatives: ['AIzaShort'],
  }),
  shape({
    name: 'slack',
    pattern: /(?<![A-Za-z0-9])(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g,
    replace: () => MASK,
    positives: [sample(`xoxb-123456789012-1234567890123-${fake('', 24)}`), sample(`xoxp-123456789012-${fake('', 32)}`, '{"slack":"', '"}'), sample('xoxb-1234567890-abcdefghij')],
    negatives: ['xoxb-short'],
  }),
  shape({
    name: 'sendgrid',
    pattern: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}/g,
    replace: () => MASK,
    positives: [sample(`SG.${fake('', 22)}.${fake('', 43)}`, 'mail via ', ' today')],
    negatives: ['SG.short.parts', 'SGVsbG8sIHdvcmxkIQ=='],
  }),
  shape({
    // JWS (three segments) and JWE (five): base64url, the header starting `eyJ` (`{"`).
    name: 'jwt',
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){1,3}/g,
    replace: () => MASK,
    positives: [sample(JWT, 'the session is ', ' until noon'), sample(`${JWT_HEADER}.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature`)],
    negatives: ['abc.def.ghi and eyJ alone', 'eyJhIjoxfQ=='],
  }),
  shape({
    // Airlock's own bearer tokens (`alk_` + 43 base64url characters; see services/users.ts).
    name: 'airlock',
    pattern: /(?<![A-Za-z0-9])alk_[A-Za-z0-9_-]{20,}/g,
    replace: () => MASK,
    positives: [sample(`alk_${fake('', 43)}`, 'token '), sample('alk_abcdefghijklmnopqrstuvwxyz')],
    negatives: ['talk_to_me_about_everything_today', 'alk_short'],
  }),
  shape({
    // `"password": "…"` inside JSON text (tool results and log lines often are JSON).
    name: 'credential-json-member',
    pattern: /"([A-Za-z0-9_.-]{1,64})"(\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g,
    replace: (match, name, separator, value) => (isCredentialName(name!) ? `"${name}"${separator}"${maskCredentialValue(value!)}"` : match),
    positives: [sample('hunter2', '{"password": "', '", "user": "bob"}'), sample('xyz-client', '{"client_id":"abc","client_secret":"', '"}')],
    negatives: ['{"max_tokens": "512", "model": "gpt-4o-mini"}'],
  }),
  {
    // `?api_key=…`, `&sig=…`, `DB_PASSWORD=…`, `--token=…`, `password: hunter2`, `api_key = 'abc'`
    // (URLs, command lines, environment lines, YAML, INI, prose): the name stays, the value goes.
    name: 'credential-assignment',
    pattern: ASSIGNMENT_NAME,
    mask: maskAssignments,
    positives: [
      sample('abc123', 'https://api.example.com/v1?api_key=', '&page=2'),
      sample('ya29.a0AfH6SM', 'https://graph.example.com/me?fields=id&access_token='),
      sample('0f1e2d3c', 'https://b.s3.amazonaws.com/k?X-Amz-Signature='),
      sample('r3dir3ct-t0k', 'https://app.example.com/login?next=https://api.example.com/cb?token='),
      sample('hunter2', 'DB_PASSWORD=', ' PGPASSWORD=x'),
      sample('hunter3', 'mysql --user=root --password='),
      sample('abc123', 'Cookie: session=', '; path=/'),
      sample('hunter4', 'password = '),
      sample('hunter5', 'call failed: password = '),
      sample('s3cr3t', 'client_secret: '),
      sample('abc-123', "api_key: '", "'"),
      sample('dGVzdA==', 'api_key: '),
    ],
    negatives: ['monkey=banana&hockey=1', 'max_tokens=1024 token_count=512', 'prompt_tokens: 12, completion_tokens: 30', 'The secret to good bread: time.'],
  },
];

/**
 * E-mail addresses: personal data, not secrets. Only the privacy redactor masks them (the stored
 * copy at REDACTED); the data tools and the logger show them. A domain needs a dotted, alphabetic
 * TLD, so `react@18.2.0` and `user@localhost` stay.
 */
export const EMAIL_ADDRESS: SecretShape = shape({
  name: 'email',
  pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g,
  replace: () => MASK,
  positives: [sample('jane.doe@example.com', 'contact ', ' today'), sample('jane.doe+news@mail.example.co.uk', '{"email":"', '"}')],
  negatives: ['user@localhost', 'react@18.2.0'],
});

function maskOnce(text: string, shapes: readonly SecretShape[]): string {
  let result = text;
  for (const { mask } of shapes) result = mask(result);
  return result;
}

/**
 * Passes until nothing changes: one shape's mask can expose another (a URL whose user part was an
 * e-mail address), and a fixed point is what makes masking idempotent. Two passes in practice.
 */
const MAX_MASK_PASSES = 6;

/** `text` with every shape of `shapes` masked, to a fixed point. Linear time. */
export function maskShapes(text: string, shapes: readonly SecretShape[] = SECRET_SHAPES): string {
  let current = text;
  for (let pass = 0; pass < MAX_MASK_PASSES; pass++) {
    const next = maskOnce(current, shapes);
    if (next === current) return current;
    current = next;
  }
  return current;
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunStep } from '../../src/runtime/run.ts';
import { countCharacters, isCredentialName, MASK, redact, REDACTED_MAX_CHARS, TRUNCATION_SUFFIX } from '../../src/redaction/redact.ts';
import { filterRunContent, filterStep, PRIVACY_LEVELS, type PrivacyLevel } from '../../src/runtime/privacy.ts';
import { CONTENT_KEYS, toStoredStep, type StoredStep } from '../../src/runtime/stored-step.ts';
import { tableArtifact, textArtifact } from '../../src/tools/result.ts';

// Fake secrets, assembled at run time so that secret scanners do not flag this file.
const ALNUM = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0UvWxYz';
const fake = (prefix: string, length: number): string => prefix + ALNUM.repeat(3).slice(0, length);
const OPENAI = fake('sk' + '-', 48);
const OPENAI_PROJECT = fake('sk' + '-proj-', 56);
const ANTHROPIC = fake('sk' + '-ant-api03-', 60) + '-_x';
const GITHUB_PAT = fake('github' + '_pat_', 22) + '_' + fake('', 40);
const GHP = fake('gh' + 'p_', 36);
const GHS = fake('gh' + 's_', 36);
const GHO = fake('gh' + 'o_', 36);
const GHU = fake('gh' + 'u_', 36);
const GHR = fake('gh' + 'r_', 36);
const AWS = 'AKIA' + 'IOSFODNN7EXAMPLE';
const AWS_SESSION = 'ASIA' + 'Y34FZKBOKMUTVV7A';
const GOOGLE = fake('AI' + 'za', 35);
const SLACK_BOT = 'xo' + 'xb-123456789012-1234567890123-' + fake('', 24);
const SLACK_USER = 'xo' + 'xp-123456789012-1234567890123-' + fake('', 32);
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9' + '.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ' + '.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const STRIPE_LIVE = fake('sk' + '_live_', 24);
const STRIPE_TEST = fake('sk' + '_test_', 24);
const STRIPE_RESTRICTED = fake('rk' + '_live_', 24);
const STRIPE_PUBLISHABLE = fake('pk' + '_live_', 24);
const SENDGRID = 'SG' + '.' + fake('', 22) + '.' + fake('', 43);

const SECRETS = [OPENAI, OPENAI_PROJECT, ANTHROPIC, GITHUB_PAT, GHP, GHS, GHO, GHU, GHR, AWS, AWS_SESSION, GOOGLE, SLACK_BOT, SLACK_USER, JWT, STRIPE_LIVE, STRIPE_TEST, STRIPE_RESTRICTED, STRIPE_PUBLISHABLE, SENDGRID];

describe('redact: secret shapes are masked', () => {
  it.each([
    ['an OpenAI key in prose', `my key is ${OPENAI}, keep it safe`, 'my key is ***, keep it safe'],
    ['an OpenAI project key in JSON', `{"apiKey":"${OPENAI_PROJECT}","model":"gpt-4o"}`, '{"apiKey":"***","model":"gpt-4o"}'],
    ['an Anthropic key on an environment line', `ANTHROPIC_API_KEY=${ANTHROPIC}`, 'ANTHROPIC_API_KEY=***'],
    ['an sk- key right after an equals sign without a name', `=${OPENAI}`, '=***'],
    ['a GitHub classic token in prose', `push with ${GHP} please`, 'push with *** please'],
    ['a fine-grained GitHub token in a URL parameter', `https://api.github.com/user?access_token=${GITHUB_PAT}`, 'https://api.github.com/user?access_token=***'],
    ['a GitHub app token used as a URL password', `git clone https://x-access-token:${GHS}@github.com/org/repo.git`, 'git clone https://x-access-token:***@github.com/org/repo.git'],
    ['GitHub OAuth, user-to-server and refresh tokens', `${GHO} ${GHU} (${GHR})`, '*** *** (***)'],
    ['an AWS access key id in prose', `aws key ${AWS}.`, 'aws key ***.'],
    ['an AWS session key id in JSON', `{"AccessKeyId":"${AWS_SESSION}"}`, '{"AccessKeyId":"***"}'],
    ['a Google API key in a URL', `https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=${GOOGLE}`, 'https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=***'],
    ['a Google API key in prose', `use ${GOOGLE} for maps`, 'use *** for maps'],
    ['a Slack bot token in prose', `SLACK: ${SLACK_BOT}`, 'SLACK: ***'],
    ['a Slack user token in JSON', `{"slack":"${SLACK_USER}"}`, '{"slack":"***"}'],
    ['a JWT in prose', `the session is ${JWT} until noon`, 'the session is *** until noon'],
    ['a JWT in JSON', `{"id_token":"${JWT}","expires_in":3600}`, '{"id_token":"***","expires_in":3600}'],
    ['a Stripe live secret key', `charge with ${STRIPE_LIVE}`, 'charge with ***'],
    ['Stripe test, restricted and publishable keys', `${STRIPE_TEST}, ${STRIPE_RESTRICTED}, ${STRIPE_PUBLISHABLE}`, '***, ***, ***'],
    ['a SendGrid key', `mail via ${SENDGRID} today`, 'mail via *** today'],
    ['a Bearer token in an Authorization header, keeping the word Bearer', 'Authorization: Bearer abc123def456', 'Authorization: Bearer ***'],
    ['a short Bearer token in a curl command', `curl -H "Authorization: Bearer tok" https://api.example.com`, 'curl -H "Authorization: Bearer ***" https://api.example.com'],
    ['a Bearer JWT in prose', `send Bearer ${JWT} with it`, 'send Bearer *** with it'],
    ['a token-looking word after a lower-case bearer', 'header: bearer abc123xyz', 'header: bearer ***'],
    ['an Authorization header in JSON, keeping the scheme', `{"Authorization": "Bearer ${OPENAI}"}`, '{"Authorization": "Bearer ***"}'],
    ['an api_key URL parameter, keeping the others', 'https://api.example.com/v1?api_key=abc123&page=2', 'https://api.example.com/v1?api_key=***&page=2'],
    ['an access_token URL parameter', 'https://graph.example.com/me?fields=id&access_token=ya29.a0AfH6SM', 'https://graph.example.com/me?fields=id&access_token=***'],
    ['a token URL parameter', 'https://example.com/download?token=abc&sort=asc', 'https://example.com/download?token=***&sort=asc'],
    [
      'secret, password, auth, signature and sig parameters',
      'https://cdn.example.com/f.png?secret=s1&password=p1&auth=a1&signature=x1&sig=y1&w=200',
      'https://cdn.example.com/f.png?secret=***&password=***&auth=***&signature=***&sig=***&w=200',
    ],
    [
      'the credential and signature of a presigned S3 URL',
      `https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${AWS}/20240101/us-east-1/s3/aws4_request&X-Amz-Signature=0f1e2d3c`,
      'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***',
    ],
    ['a session cookie, keeping the separator after it', 'Cookie: session=abc123; path=/', 'Cookie: session=***; path=/'],
    ['a token parameter in a Markdown link, keeping the closing parenthesis', '[file](https://x.io/f?token=abc).', '[file](https://x.io/f?token=***).'],
    ['a password on an environment line', 'DB_PASSWORD=hunter2 PGPASSWORD=s3cr3t', 'DB_PASSWORD=*** PGPASSWORD=***'],
    ['a password flag', 'mysql --user=root --password=hunter2', 'mysql --user=root --password=***'],
    ['a URL userinfo password, keeping user and host', 'postgres://admin:hunter2@db.internal:5432/app', 'postgres://admin:***@db.internal:5432/app'],
    ['a URL password without a user', 'redis://:s3cret@cache:6379/0', 'redis://:***@cache:6379/0'],
    ['a URL password containing a colon', 'amqp://guest:pa:ss@rabbit/', 'amqp://guest:***@rabbit/'],
    ['an e-mail address in prose', 'contact jane.doe@example.com today', 'contact *** today'],
    ['an e-mail address with a tag and a long domain in JSON', '{"email":"jane.doe+news@mail.example.co.uk"}', '{"email":"***"}'],
    ['an e-mail address in a mailto URL', 'mailto:jane@example.org?subject=hi', 'mailto:***?subject=hi'],
    ['a password member in JSON text', '{"password": "hunter2", "user": "bob"}', '{"password": "***", "user": "bob"}'],
    ['a client secret member in JSON text', '{"client_id":"abc","client_secret":"xyz"}', '{"client_id":"abc","client_secret":"***"}'],
    ['several secrets at once', `key ${OPENAI} for jane@example.com, aws ${AWS}`, 'key *** for ***, aws ***'],
    ['a secret on its own line in a multi-line log', `line 1\nAuthorization: Bearer ${GHP}\nline 3`, 'line 1\nAuthorization: Bearer ***\nline 3'],
  ])('should mask %s', (_name, input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each(SECRETS.map((secret) => [secret.slice(0, 12), secret]))('should never let %s… through when surrounded by arbitrary text', (_name, secret) => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (before, after) => {
        expect(redact(`${before} ${secret} ${after}`)).not.toContain(secret);
      }),
      { numRuns: 50 },
    );
  });
});

describe('redact: ordinary text is left alone', () => {
  it.each([
    ['an Anthropic model id', 'claude-opus-4-5-20251101'],
    ['an OpenAI model id', 'gpt-4o-2024-08-06'],
    ['other model ids', 'gemini-2.0-flash-001, mistral-large-2411, llama3.1:70b, o3-mini-2025-01-31'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000'],
    ['an MD5 digest', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['a SHA-1 digest', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
    ['a SHA-256 digest', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['a POSIX path', '/var/lib/app/config.yaml'],
    ['a Windows path', 'C:\\Users\\x\\AppData\\Local\\app.log'],
    ['ordinary prose', 'The quick brown fox jumps over the lazy dog. It was the secret to good bread: time.'],
    ['a word ending in sk followed by a long hyphenated tail', 'task-queue-processor-for-nightly-batch-jobs'],
    ['desk-lamp', 'desk-lamp'],
    ['a report name containing sk-', 'risk-assessment-2024-report-final-version'],
    ['AKIA inside a longer word', 'MAKIAVELLI and XAKIAIOSFODNN7EXAMPLE'],
    ['an AKIA-like word longer than a key id', 'AKIAIOSFODNN7EXAMPLEEXTRA'],
    ['semantic versions', '1.2.3-beta.1+build.5 and v2.0.0-rc.1'],
    ['package specifiers', 'react@18.2.0 @types/node lodash@4.17.21'],
    ['a date and time', '2024-08-06T12:34:56.789Z, 2024-08-06 12:34'],
    ['IP addresses', '192.168.0.1, 10.0.0.254:8080, 2001:db8::1'],
    ['a URL with harmless parameters', 'https://example.com/search?q=cats&page=2&sort=asc'],
    ['a URL with a port and no userinfo', 'https://example.com:8443/health'],
    ['prose about bearers', 'the bearer of bad news; Bearer authentication is a scheme'],
    ['counts that mention tokens', 'max_tokens=1024 token_count=512 tokenizer=cl100k_base'],
    ['a parameter whose name merely ends in key letters', 'monkey=banana&hockey=1'],
    ['a short sk- word', 'pip install sk-learn'],
    ['a too-short GitHub-looking word', 'ghp_short and gho_'],
    ['an address without a dotted domain', 'user@localhost'],
    ['a base64url word without the JWT header', 'abc.def.ghi and eyJ alone'],
    ['an empty string', ''],
  ])('should not mask %s', (_name, input) => {
    expect(redact(input)).toBe(input);
  });
});

describe('redact: the cap', () => {
  const suffixChars = countCharacters(TRUNCATION_SUFFIX);

  it('should use the documented cap and suffix', () => {
    expect(REDACTED_MAX_CHARS).toBe(2_000);
    expect(TRUNCATION_SUFFIX).toBe('… [truncated]');
  });

  it('should pass exactly 2 000 characters unchanged', () => {
    expect(redact('x'.repeat(2_000))).toBe('x'.repeat(2_000));
  });

  it('should cut 2 001 characters to 2 000 and add the suffix', () => {
    expect(redact('x'.repeat(2_001))).toBe('x'.repeat(2_000) + TRUNCATION_SUFFIX);
  });

  it('should count characters, not UTF-16 units', () => {
    expect(redact('😀'.repeat(2_000))).toBe('😀'.repeat(2_000));
    expect(redact('😀'.repeat(2_001))).toBe('😀'.repeat(2_000) + TRUNCATION_SUFFIX);
  });

  it('should never split a surrogate pair at the cut', () => {
    const capped = redact('a'.repeat(1_999) + '😀😀');
    expect(capped).toBe('a'.repeat(1_999) + '😀' + TRUNCATION_SUFFIX);
  });

  it('should mask before cutting, so a secret across the cut is neither kept nor half-kept', () => {
    const input = 'x'.repeat(1_990) + ' ' + OPENAI + ' tail';
    expect(redact(input)).toBe('x'.repeat(1_990) + ' *** tail');
  });

  it('should mask a key id that the cut completes, and stay idempotent', () => {
    const input = 'y'.repeat(1_979) + ' ' + AWS + 'MORE' + 'z'.repeat(100);
    const once = redact(input);
    expect(once).not.toContain(AWS);
    expect(countCharacters(once)).toBe(REDACTED_MAX_CHARS + suffixChars);
    expect(redact(once)).toBe(once);
  });

  it('should keep a capped result capped and unchanged when redacted again', () => {
    const once = redact(`${'word '.repeat(500)}jane@example.com`);
    expect(once.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect(redact(once)).toBe(once);
  });
});

describe('redact: properties', () => {
  const suffixChars = countCharacters(TRUNCATION_SUFFIX);
  const FRAGMENTS = [
    'sk-', 'sk_live_', 'AKIA', 'ASIA', 'IOSFODNN7EXAMPLE', 'AIza', 'xoxb-', 'SG.', 'ghp_', 'github_pat_', 'eyJ', 'eyJhbGciOiJIUzI1NiJ9',
    '.', '-', '_', '@', ':', '/', '//', 'https://', 'user', ':pw@', '@host', 'example.com', '.co', 'jane', '=', '&', '?', '#',
    'token=', 'key=', 'sig=', 'password', '"password": "', '"', '\\', 'Bearer ', 'bearer ', 'Authorization: ', 'Basic ', '***', '*',
    '…', TRUNCATION_SUFFIX, ' ', '\n', '😀', '\uD83D', 'A'.repeat(16), 'a1'.repeat(12), 'Zz9'.repeat(15), 'x'.repeat(500),
    OPENAI, AWS, JWT, SENDGRID, GOOGLE, 'jane@example.com',
  ];
  const fromFragments = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join(''));
  /** Fragments after a filler of 0 – 2 100 characters, so that the cut falls anywhere among them. */
  const aroundTheCap = fc
    .tuple(fc.integer({ min: 0, max: 2_100 }), fc.constantFrom('x', ' ', '-', 'A', '*', '.'), fromFragments)
    .map(([length, filler, tail]) => filler.repeat(length) + tail);
  const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 3_000 }), fc.string({ maxLength: 300 }), fromFragments, aroundTheCap);

  it('should be idempotent, never throw and stay within the cap', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = redact(text);
        expect(redact(once)).toBe(once);
        expect(countCharacters(once)).toBeLessThanOrEqual(REDACTED_MAX_CHARS + suffixChars);
      }),
      { numRuns: 3_000 },
    );
  });

  it('should count characters the way the string iterator does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(countCharacters(text)).toBe([...text].length);
      }),
    );
  });

  // Each of these is 1 MB of text built to make a careless pattern backtrack; none may stall.
  it.each([
    ['letters', 'a'.repeat(1_000_000)],
    ['repeated sk- prefixes', 'sk-'.repeat(333_334)],
    ['at signs between letters', 'a@'.repeat(500_000)],
    ['a dotted local part without an at sign', `${'a.'.repeat(500_000)}@`],
    ['a dotted domain without a TLD', `a@${'b.'.repeat(500_000)}1`],
    ['URL schemes without a host', 'a://a:'.repeat(200_000)],
    ['a scheme followed by colons', `x://${':'.repeat(1_000_000)}`],
    ['an unterminated JSON password of backslashes', `"password":"${'\\'.repeat(1_000_000)}`],
    ['a JSON key followed by spaces', `"a"${' '.repeat(1_000_000)}`],
    ['JWT-looking segments', 'eyJaa.'.repeat(200_000)],
    ['Bearer words', 'Bearer '.repeat(150_000)],
    ['parameters', 'a=b&'.repeat(250_000)],
    ['equals signs', '='.repeat(1_000_000)],
    ['quotes', '"'.repeat(1_000_000)],
    ['AKIA prefixes', 'AKIA'.repeat(250_000)],
  ])('should finish on 1 MB of %s', (_name, input) => {
    const result = redact(input);
    expect(countCharacters(result)).toBeLessThanOrEqual(REDACTED_MAX_CHARS + suffixChars);
  });
});

describe('isCredentialName', () => {
  it.each([
    ['api_key', true], ['apiKey', true], ['x-api-key', true], ['key', true], ['access_token', true], ['accessToken', true],
    ['X-Amz-Signature', true], ['sig', true], ['DB_PASSWORD', true], ['password_hash', true], ['client_secret', true],
    ['session_id', true], ['auth', true], ['max_tokens', false], ['token_count', false], ['monkey', false], ['email', false],
    ['tokenizer', false], ['id', false], ['', false],
  ] as const)('should judge %s as %s', (name, expected) => {
    expect(isCredentialName(name)).toBe(expected);
  });
});

// ── steps

const REQUEST: RunStep = {
  kind: 'REQUEST',
  round: 1,
  messagesSent: [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: `My key is ${OPENAI}; mail me at jane@example.com` },
  ],
  offeredTools: ['read_records'],
};

const LLM: RunStep = {
  kind: 'LLM',
  round: 1,
  content: 'Looking up jane@example.com 😀',
  thinking: `the user leaked ${OPENAI}`,
  requestedToolCalls: [{ id: 'call_1', name: 'read_records', arguments: { table: 'users', filters: { email: 'jane@example.com' } } }],
  usage: { promptTokens: 120, completionTokens: 30, cost: 0.0012 },
  finishReason: 'tool_calls',
  durationMs: 812.5,
};

const TOOL: RunStep = {
  kind: 'TOOL',
  round: 1,
  toolCallId: 'call_1',
  toolName: 'read_records',
  toolArguments: { table: 'users', password: 'hunter2', pin: 1234, 'jane@example.com': true },
  toolResult: 'id | email\n1 | jane@example.com',
  toolIsError: false,
  artifacts: [tableArtifact('Users like jane@example.com', ['id', 'email'], [['1', 'jane@example.com']]), textArtifact('Note', `token=${GHP}`)],
  durationMs: 40,
};

const STEPS = { REQUEST, LLM, TOOL } as const;
const SECRET_TEXTS = [OPENAI, 'jane@example.com', 'hunter2', GHP];

const METADATA_OF: Record<keyof typeof STEPS, Partial<StoredStep>> = {
  REQUEST: { kind: 'REQUEST', round: 1, durationMs: null, offeredTools: ['read_records'] },
  LLM: { kind: 'LLM', round: 1, durationMs: 812.5, finishReason: 'tool_calls', usage: { promptTokens: 120, completionTokens: 30, cost: 0.0012 } },
  TOOL: { kind: 'TOOL', round: 1, durationMs: 40, toolName: 'read_records', toolCallId: 'call_1', toolIsError: false },
};

const SUMMARIES_OF: Record<keyof typeof STEPS, Partial<StoredStep>> = {
  REQUEST: { messagesSentCount: 2 },
  LLM: { contentLength: 29, requestedToolNames: ['read_records'] },
  TOOL: { toolResultLength: 31, toolArtifactsCount: 2, toolArtifactTypes: ['table', 'text'] },
};

const CONTENT_KEYS_OF: Record<keyof typeof STEPS, readonly string[]> = {
  REQUEST: ['messagesSent'],
  LLM: ['content', 'thinking', 'requestedToolCalls'],
  TOOL: ['toolArguments', 'toolResult', 'toolArtifacts'],
};

const contentKeysIn = (step: StoredStep): string[] => Object.keys(step).filter((key) => (CONTENT_KEYS as readonly string[]).includes(key));

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

describe('toStoredStep', () => {
  it.each(Object.keys(STEPS) as (keyof typeof STEPS)[])('should store a %s step verbatim with its metadata and summaries', (kind) => {
    const stored = toStoredStep(STEPS[kind]);
    expect(stored).toMatchObject({ ...METADATA_OF[kind], ...SUMMARIES_OF[kind], contentRedacted: false });
    expect(contentKeysIn(stored).sort()).toEqual([...CONTENT_KEYS_OF[kind]].sort());
    expect(JSON.parse(JSON.stringify(stored))).toEqual(stored);
  });

  it('should count the content in characters, an emoji being one', () => {
    expect(LLM.kind === 'LLM' && LLM.content.length).toBe(30);
    expect(toStoredStep(LLM).contentLength).toBe(29);
  });

  it('should store the artifacts as toolArtifacts, as plain copies', () => {
    const stored = toStoredStep(TOOL);
    expect(stored.toolArtifacts).toEqual(TOOL.kind === 'TOOL' ? TOOL.artifacts : null);
    expect(stored.toolArtifacts?.[0]).not.toBe(TOOL.kind === 'TOOL' ? TOOL.artifacts[0] : null);
  });
});

describe('filterStep at each level', () => {
  const cases = PRIVACY_LEVELS.flatMap((level) => (Object.keys(STEPS) as (keyof typeof STEPS)[]).map((kind) => [level, kind] as const));

  it.each(cases)('should keep metadata and summaries at %s for a %s step', (level, kind) => {
    const filtered = filterStep(toStoredStep(STEPS[kind]), level);
    expect(filtered).toMatchObject({ ...METADATA_OF[kind], ...SUMMARIES_OF[kind] });
  });

  it.each(cases.filter(([level]) => level === 'NONE' || level === 'METADATA'))('should drop every content key at %s for a %s step', (level, kind) => {
    const filtered = filterStep(toStoredStep(STEPS[kind]), level);
    expect(contentKeysIn(filtered)).toEqual([]);
    expect(filtered.contentRedacted).toBe(true);
    for (const secret of SECRET_TEXTS) expect(JSON.stringify(filtered)).not.toContain(secret);
  });

  it.each(cases.filter(([level]) => level === 'REDACTED'))('should keep the shape but mask secrets at %s for a %s step', (level, kind) => {
    const filtered = filterStep(toStoredStep(STEPS[kind]), level);
    expect(contentKeysIn(filtered).sort()).toEqual([...CONTENT_KEYS_OF[kind]].sort());
    expect(filtered.contentRedacted).toBe(true);
    for (const secret of SECRET_TEXTS) expect(JSON.stringify(filtered)).not.toContain(secret);
  });

  it.each(cases.filter(([level]) => level === 'FULL'))('should keep everything verbatim at %s for a %s step', (level, kind) => {
    const stored = toStoredStep(STEPS[kind]);
    const filtered = filterStep(stored, level);
    expect(filtered).toEqual(stored);
    expect(filtered.contentRedacted).toBe(false);
  });

  it('should treat NONE and METADATA alike for steps', () => {
    for (const step of Object.values(STEPS)) {
      const stored = toStoredStep(step);
      expect(filterStep(stored, 'NONE')).toEqual(filterStep(stored, 'METADATA'));
    }
  });

  it('should redact the messages sent but keep their roles', () => {
    const filtered = filterStep(toStoredStep(REQUEST), 'REDACTED');
    expect(filtered.messagesSent).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'My key is ***; mail me at ***' },
    ]);
  });

  it('should redact LLM content, thinking and the requested calls', () => {
    const filtered = filterStep(toStoredStep(LLM), 'REDACTED');
    expect(filtered).toMatchObject({
      content: 'Looking up *** 😀',
      thinking: 'the user leaked ***',
      requestedToolCalls: [{ id: 'call_1', name: 'read_records', arguments: { table: 'users', filters: { email: '***' } } }],
      contentLength: 29,
    });
  });

  it('should mask values under credential-named keys and redact keys in tool arguments', () => {
    const filtered = filterStep(toStoredStep(TOOL), 'REDACTED');
    // `pin` is a credential name of the catalogue (src/redaction/credentials.ts): numbers under it are masked too.
    expect(filtered.toolArguments).toEqual({ table: 'users', password: '***', pin: MASK, [MASK]: true });
    expect(filtered.toolResult).toBe('id | email\n1 | ***');
  });

  it('should keep both of two keys that redact alike', () => {
    const stored: StoredStep = { kind: 'TOOL', round: 1, durationMs: 1, contentRedacted: false, toolArguments: { 'a@example.com': 1, 'b@example.com': 2 } };
    expect(filterStep(stored, 'REDACTED').toolArguments).toEqual({ '***': 1, '*** (2)': 2 });
  });

  it('should redact every string leaf of an artifact, label included', () => {
    const filtered = filterStep(toStoredStep(TOOL), 'REDACTED');
    expect(filtered.toolArtifacts).toEqual([
      { type: 'table', label: 'Users like ***', data: { columns: ['id', 'email'], rows: [['1', '***']] } },
      { type: 'text', label: 'Note', data: { text: 'token=***' } },
    ]);
  });

  it('should redact an artifact type that looks like a secret, leaving a plain object', () => {
    const stored: StoredStep = {
      kind: 'TOOL',
      round: 2,
      durationMs: 3,
      contentRedacted: false,
      toolArtifacts: [{ type: 'ops@example.com', label: 'x', data: { n: 1 } }],
    };
    const filtered = filterStep(stored, 'REDACTED');
    expect(filtered.toolArtifacts).toEqual([{ type: '***', label: 'x', data: { n: 1 } }]);
    expect(filtered.toolArtifactTypes).toEqual(['***']);
  });

  it('should redact free-text metadata below FULL but keep ordinary tool names', () => {
    const stored: StoredStep = { kind: 'TOOL', round: 1, durationMs: 1, contentRedacted: false, toolName: `lookup_${'x'}`, toolCallId: `call ${OPENAI}` };
    expect(filterStep(stored, 'METADATA')).toMatchObject({ toolName: 'lookup_x', toolCallId: 'call ***' });
    expect(filterStep(stored, 'FULL')).toMatchObject({ toolCallId: `call ${OPENAI}` });
  });

  it('should keep summaries when purging a stored copy that no longer has content', () => {
    const redacted = filterStep(toStoredStep(TOOL), 'REDACTED');
    expect(filterStep(redacted, 'METADATA')).toEqual(filterStep(toStoredStep(TOOL), 'METADATA'));
  });

  it('should compute missing summaries from the content it is given', () => {
    const bare: StoredStep = { kind: 'LLM', round: 1, durationMs: 5, contentRedacted: false, content: 'héllo', requestedToolCalls: [{ name: 'a' }, {}] };
    expect(filterStep(bare, 'METADATA')).toMatchObject({ contentLength: 5, requestedToolNames: ['a', ''] });
  });

  it('should not claim verbatim content at FULL for a copy an earlier filter redacted', () => {
    const redacted = filterStep(toStoredStep(LLM), 'REDACTED');
    expect(filterStep(redacted, 'FULL').contentRedacted).toBe(true);
  });

  it('should drop keys it does not know', () => {
    const stored = { ...toStoredStep(LLM), debugDump: `secret ${OPENAI}` } as StoredStep;
    for (const level of PRIVACY_LEVELS) expect(filterStep(stored, level)).not.toHaveProperty('debugDump');
  });

  it.each(PRIVACY_LEVELS)('should be idempotent at %s', (level) => {
    for (const step of Object.values(STEPS)) {
      const once = filterStep(toStoredStep(step), level);
      expect(filterStep(once, level)).toEqual(once);
    }
  });

  it.each(PRIVACY_LEVELS)('should not mutate its (frozen) input at %s and return new objects', (level) => {
    for (const step of Object.values(STEPS)) {
      const stored = deepFreeze(toStoredStep(step));
      const before = structuredClone(stored);
      const filtered = filterStep(stored, level);
      expect(stored).toEqual(before);
      expect(filtered).not.toBe(stored);
      if (filtered.toolArtifacts) expect(filtered.toolArtifacts).not.toBe(stored.toolArtifacts);
      if (filtered.messagesSent) expect(filtered.messagesSent).not.toBe(stored.messagesSent);
    }
  });
});

describe('filterStep on hostile input', () => {
  const base = (extra: Partial<StoredStep>): StoredStep => ({ kind: 'TOOL', round: 1, durationMs: 1, contentRedacted: false, ...extra });

  it('should replace a circular reference with a marker', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    for (const level of ['REDACTED', 'FULL'] as const) {
      const filtered = filterStep(base({ toolArguments: cyclic }), level);
      expect(filtered.toolArguments).toEqual({ name: 'loop', self: '[omitted: circular reference]' });
      expect(() => JSON.stringify(filtered)).not.toThrow();
    }
  });

  it('should cut nesting deeper than it stores', () => {
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 5_000; depth++) deep = [deep];
    const filtered = filterStep(base({ toolArguments: deep }), 'REDACTED');
    expect(JSON.stringify(filtered)).toContain('[omitted: nested too deep]');
  });

  it('should turn a throwing getter into a marker and other non-JSON values into JSON', () => {
    const hostile = {
      get boom(): string {
        throw new Error('no');
      },
    };
    const filtered = filterStep(base({ toolArguments: { hostile, big: 10n, when: new Date(0), nan: Number.NaN, fn: () => 1, list: [undefined] } }), 'FULL');
    expect(filtered.toolArguments).toEqual({ hostile: '[omitted: unreadable value]', big: '10', when: '1970-01-01T00:00:00.000Z', nan: null, list: [null] });
  });

  it('should keep a __proto__ key as data', () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const filtered = filterStep(base({ toolArguments: args }), 'REDACTED');
    expect(Object.keys(filtered.toolArguments as object)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('should fail closed on a step that is not an object or a level it does not know', () => {
    expect(filterStep(null as unknown as StoredStep, 'FULL')).toEqual({ kind: 'REQUEST', round: 0, durationMs: null, contentRedacted: true });
    const unknownLevel = filterStep(toStoredStep(LLM), 'EVERYTHING' as PrivacyLevel);
    expect(contentKeysIn(unknownLevel)).toEqual([]);
    expect(unknownLevel.contentRedacted).toBe(true);
  });

  it('should never throw and never leave content below REDACTED, whatever the content keys hold', () => {
    const contentValue = fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withObjectString: true, maxDepth: 4 });
    const step = fc.record(
      {
        kind: fc.constantFrom('REQUEST', 'LLM', 'TOOL', 'OTHER'),
        round: fc.anything(),
        durationMs: fc.anything(),
        contentRedacted: fc.anything(),
        messagesSent: contentValue,
        content: contentValue,
        toolArguments: contentValue,
        toolArtifacts: contentValue,
        toolName: fc.anything(),
        usage: fc.anything(),
      },
      { requiredKeys: ['kind'] },
    );
    fc.assert(
      fc.property(step, fc.constantFrom(...PRIVACY_LEVELS), (raw, level) => {
        const input = raw as unknown as StoredStep;
        const filtered = filterStep(input, level);
        expect(() => JSON.stringify(filtered)).not.toThrow();
        if (level === 'NONE' || level === 'METADATA') expect(contentKeysIn(filtered)).toEqual([]);
        expect(typeof filtered.contentRedacted).toBe('boolean');
        expect(filterStep(filtered, level)).toEqual(filtered);
      }),
      { numRuns: 500 },
    );
  });
});

describe('filterRunContent', () => {
  const run = { prompt: `Use ${OPENAI} to mail jane@example.com 😀`, finalContent: 'Done for jane@example.com.' };
  const lengths = { promptLength: countCharacters(run.prompt), finalContentLength: 26 };

  it.each([
    ['NONE', { prompt: null, finalContent: null, contentRedacted: true }],
    ['METADATA', { prompt: null, finalContent: null, contentRedacted: true }],
    ['REDACTED', { prompt: 'Use *** to mail *** 😀', finalContent: 'Done for ***.', contentRedacted: true }],
    ['FULL', { prompt: run.prompt, finalContent: run.finalContent, contentRedacted: false }],
  ] as const)('should store the prompt and final content at %s as the level says, with their lengths', (level, expected) => {
    expect(filterRunContent(level, run)).toEqual({ ...expected, ...lengths });
  });

  it('should report no length for content that is absent', () => {
    expect(filterRunContent('FULL', { prompt: null, finalContent: null })).toEqual({
      prompt: null,
      finalContent: null,
      promptLength: null,
      finalContentLength: null,
      contentRedacted: false,
    });
  });

  it('should store no content for a level it does not know', () => {
    expect(filterRunContent('LOUD' as PrivacyLevel, run)).toMatchObject({ prompt: null, finalContent: null, contentRedacted: true });
  });
});

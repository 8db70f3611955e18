import { describe, expect, it } from 'vitest';
import {
  capCell,
  isCredentialColumn,
  isSecretEnvName,
  MAX_CELL_CHARS,
  maskUrlCredentials,
  redactEnvValue,
  redactSecrets,
  REDACTED_VALUE,
} from '../../src/redaction/masking.ts';

describe('isCredentialColumn', () => {
  it.each([
    'password',
    'password_hash',
    'PasswordHash',
    'passwd',
    'user_pwd',
    'api_key',
    'apiKey',
    'APIKEY',
    'access_token',
    'refresh-token',
    'client_secret',
    'salt',
    'pw_salt',
    'private_key',
    'credentials',
    'session_id',
    'otp',
    'otp_seed',
    'mfa_secret',
    'card_cvv',
    'auth',
    'cookie',
    // From the one catalogue's union (they used to be hidden only in some places).
    'stripe_key',
    'webhook_signature',
    'sentry_dsn',
    'api_key_ciphertext',
  ])('should mask %s', (name) => {
    expect(isCredentialColumn(name)).toBe(true);
  });

  it.each(['id', 'name', 'email', 'created_at', 'status', 'total', 'customer_id', 'footprint', 'shipping_address', 'author', 'spinner', 'description', 'keyword', 'is_private'])(
    'should show %s',
    (name) => {
      expect(isCredentialColumn(name)).toBe(false);
    },
  );
});

describe('isSecretEnvName', () => {
  it.each([
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'AIRLOCK_ADMIN_TOKEN',
    'AIRLOCK_MASTER_KEY',
    'DATABASE_URL',
    'TEST_DATABASE_URL',
    'DB_PASS',
    'PGPASSWORD',
    'GITHUB_AUTH',
    'CLIENT_SECRET',
    'AWS_SECRET_ACCESS_KEY',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'SENTRY_DSN',
    'MONGO_CONNECTION_STRING',
    'npm_config__authtoken',
    'SSH_PRIVATE_KEY',
  ])('should redact %s', (name) => {
    expect(isSecretEnvName(name)).toBe(true);
  });

  it.each(['HOME', 'PATH', 'PWD', 'OLDPWD', 'NODE_ENV', 'PORT', 'KEYBOARD_LAYOUT', 'LOG_LEVEL', 'GIT_AUTHOR_NAME', 'AIRLOCK_DATA_DIR'])(
    'should show %s',
    (name) => {
      expect(isSecretEnvName(name)).toBe(false);
    },
  );

  it('should redact a secret-named value entirely and other values only where they hide secrets', () => {
    expect(redactEnvValue('API_TOKEN', 'anything')).toBe(REDACTED_VALUE);
    expect(redactEnvValue('UPSTREAM', 'https://u:p4ss@host/x')).toBe('https://u:***@host/x');
    expect(redactEnvValue('HOME', '/root')).toBe('/root');
  });
});

describe('maskUrlCredentials', () => {
  it.each([
    ['postgres://user:secret@host/db', 'postgres://user:***@host/db'],
    ['postgresql://airlock:p%40ss@db:5432/x?sslmode=require', 'postgresql://airlock:***@db:5432/x?sslmode=require'],
    ['redis://:onlypass@cache:6379', 'redis://:***@cache:6379'],
    ['mongodb+srv://u:pa/ss:w@cluster.example.net/db', 'mongodb+srv://u:***@cluster.example.net/db'],
    ['see amqp://guest:guest@mq and https://a:b@c.example', 'see amqp://guest:***@mq and https://a:***@c.example'],
    ['https://example.com/path', 'https://example.com/path'],
    ['ssh://git@github.com/repo', 'ssh://git@github.com/repo'],
  ])('%s', (input, expected) => {
    expect(maskUrlCredentials(input)).toBe(expected);
  });
});

describe('redactSecrets', () => {
  it.each([
    ['Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer ***'],
    ['key sk-abcdefghijklmnopqrstu here', 'key *** here'],
    ['key sk-proj-abcdefghijklmnopqrstu', 'key ***'],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', '***'],
    ['AKIAABCDEFGHIJKLMNOP', '***'],
    ['xoxb-1234567890-abcdefghij', '***'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature', '***'],
    ['token alk_abcdefghijklmnopqrstuvwxyz', 'token ***'],
    ['?api_key=abc123&x=1', '?api_key=***&x=1'],
    ['{"password":"hunter2"}', '{"password":"***"}'],
    ['password = hunter2', 'password = ***'],
  ])('%s', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it.each([
    'model gpt-4o-mini answered in 120 ms',
    'run 7f9c2d1e-8a4b-4c3d-9e2f-1a2b3c4d5e6f finished',
    'sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'we use scikit sk-learn',
    'prompt_tokens: 12, completion_tokens: 30',
    '/var/lib/airlock/data',
  ])('should leave ordinary text alone: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('capCell', () => {
  it('should keep a cell of at most the cap unchanged', () => {
    expect(capCell('')).toBe('');
    const exact = 'a'.repeat(MAX_CELL_CHARS);
    expect(capCell(exact)).toBe(exact);
    // 300 astral characters are 600 UTF-16 units but still 300 characters.
    const astral = '𝄞'.repeat(MAX_CELL_CHARS);
    expect(capCell(astral)).toBe(astral);
  });

  it('should cut a longer cell to the cap, ellipsis included, never splitting a pair', () => {
    expect(capCell('a'.repeat(MAX_CELL_CHARS + 1))).toBe(`${'a'.repeat(MAX_CELL_CHARS - 1)}…`);
    const cut = capCell(`${'a'.repeat(298)}𝄞𝄞𝄞`);
    expect(cut).toBe(`${'a'.repeat(298)}𝄞…`);
    expect([...cut]).toHaveLength(MAX_CELL_CHARS);
    expect(capCell('abcdef', 4)).toBe('abc…');
  });
});

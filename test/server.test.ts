import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { TEST_DATABASES } from './helpers/databases.ts';

const CONSOLE = 'https://console.example.com';
const EVIL = 'https://evil.example.net';

describe.each(TEST_DATABASES)('HTTP surface on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_CORS_ORIGINS: CONSOLE } });
  });
  afterAll(() => t.stop());

  const userCount = async () => (await t.app.services.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

  it('should refuse a form-encoded or plain-text POST with 415 and run nothing', async () => {
    const before = Number(await userCount());
    const mutation = 'mutation { createUser(input: { name: "planted-by-a-form" }) { __typename } }';
    const bodies: [string, string][] = [
      ['application/x-www-form-urlencoded', new URLSearchParams({ query: mutation }).toString()],
      ['text/plain', JSON.stringify({ query: mutation })],
      ['multipart/form-data; boundary=x', `--x\r\ncontent-disposition: form-data; name="query"\r\n\r\n${mutation}\r\n--x--\r\n`],
    ];
    for (const [type, body] of bodies) {
      const response = await t.fetch({ method: 'POST', headers: { 'content-type': type, authorization: `Bearer ${t.adminToken}` }, body });
      expect(response.status, type).toBe(415);
      expect(await response.json()).toEqual({ errors: [{ message: 'Unsupported Media Type: send the operation as application/json.' }] });
    }
    expect(Number(await userCount())).toBe(before);
    const json = await t.gql('mutation { createUser(input: { name: "sent-as-json" }) { __typename } }');
    expect(json.data?.createUser.__typename).toBe('CreateUserPayload');
  });

  it('should send CORS headers to a listed origin only, never reflect another, and never allow credentials', async () => {
    const preflight = (origin: string) =>
      t.fetch({ method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    const allowed = await preflight(CONSOLE);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    const refused = await preflight(EVIL);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await t.fetch({
      method: 'POST',
      headers: { origin: EVIL, 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: '{ viewer { name } }' }),
    });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    expect(simple.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('AIRLOCK_CORS_ORIGINS', () => {
  it('should default to no origin at all', () => {
    expect(loadConfig({ AIRLOCK_DATA_DIR: 'memory://' }).corsOrigins).toEqual([]);
  });

  it('should take exact origins and refuse paths, wildcards and other schemes, naming the variable', () => {
    expect(loadConfig({ AIRLOCK_CORS_ORIGINS: `${CONSOLE}, http://localhost:5173` }).corsOrigins).toEqual([CONSOLE, 'http://localhost:5173']);
    for (const bad of ['*', `${CONSOLE}/`, `${CONSOLE}/app`, 'ftp://files.example.com', 'console.example.com']) {
      expect(() => loadConfig({ AIRLOCK_CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ AIRLOCK_CORS_ORIGINS: bad }), bad).toThrow(/AIRLOCK_CORS_ORIGINS: must list origins/);
    }
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import type { DbKind } from '../../src/db/create-db.ts';
import { REDIS_SERVER, startPrivateRedis, uniquePrefix, type PrivateRedis } from '../helpers/redis.ts';

/** A started app of the given kind, for each test of a describe block, and its /ready answer. */
function servedApp(kind: DbKind) {
  const app = {} as { t: TestApp; base: string };
  beforeAll(async () => {
    app.t = await startTestApp(kind);
    app.base = (await app.t.app.server.start()).url.replace(/\/graphql$/, '');
  });
  afterAll(() => app.t.stop());
  const ready = async () => {
    const response = await fetch(`${app.base}/ready`);
    return { status: response.status, body: (await response.json()) as unknown };
  };
  return { app, ready };
}

describe.each(TEST_DATABASES)('/health and /ready on %s', (kind) => {
  const { app, ready } = servedApp(kind);

  it('should say ready when the database answers, and keep /metrics off without a token', async () => {
    expect((await fetch(`${app.base}/health`)).status).toBe(200);
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { database: 'ok' } } });
    expect((await fetch(`${app.base}/ready`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${app.base}/metrics`)).status).toBe(404);
  });
});

// A stopped database needs a server to stop: PostgreSQL only (the embedded one lives in the process).
describe.each(TEST_DATABASES.filter((kind) => kind === 'postgres'))('/ready when the database stops, on %s', (kind) => {
  const { app, ready } = servedApp(kind);

  it('should answer 503 while the database refuses connections, and recover', async () => {
    const name = new URL(app.t.database.databaseUrl!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      // The database "stops": no new connection is accepted and every open one is cut.
      await admin.query(`alter database ${name} allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
      const down = await ready();
      expect(down).toEqual({ status: 503, body: { ready: false, checks: { database: 'unavailable' } } });
      expect((await fetch(`${app.base}/health`)).status).toBe(200);
      expect(app.t.logs.text()).toContain('readiness check failed');
    } finally {
      await admin.query(`alter database ${name} allow_connections true`);
      await admin.end();
    }
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { database: 'ok' } } });
  });
});

describe.skipIf(!REDIS_SERVER || !process.env.TEST_DATABASE_URL)('/ready with Redis, on postgres', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startTestApp('postgres', { env: { REDIS_URL: redis.url, AIRLOCK_REDIS_PREFIX: uniquePrefix('ready') } });
    base = (await t.app.server.start()).url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await t.stop();
    await redis.stop();
  });

  /** Polls /ready until it answers `status` (Redis loss and recovery are noticed asynchronously). */
  const readyUntil = async (status: number) => {
    for (;;) {
      const response = await fetch(`${base}/ready`);
      const body = (await response.json()) as unknown;
      if (response.status === status) return body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('should check Redis too: 503 while it is gone, 200 once it is back', async () => {
    expect(await readyUntil(200)).toEqual({ ready: true, checks: { database: 'ok', redis: 'ok' } });
    await redis.stop();
    expect(await readyUntil(503)).toEqual({ ready: false, checks: { database: 'ok', redis: 'unavailable' } });
    await redis.start();
    expect(await readyUntil(200)).toEqual({ ready: true, checks: { database: 'ok', redis: 'ok' } });
  });
});

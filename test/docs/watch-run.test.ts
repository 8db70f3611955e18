import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, watchRun, WatchRunError } from '../../examples/watch-run.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { freePort } from '../helpers/redis.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe.each(TEST_DATABASES)('examples/watch-run.ts on %s', (kind) => {
  let t: TestApp;
  let wsUrl: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    wsUrl = (await t.app.server.start()).url.replace(/^http/, 'ws');
  });
  afterAll(() => t.stop());

  it('should give up at once with a readable message when the token is refused (4403), instead of retrying', async () => {
    const started = performance.now();
    const events: unknown[] = [];
    const failure = await watchRun({ url: wsUrl, token: 'alk_not-a-real-token', runId: 'UnVuOng=', onEvent: (event) => events.push(event) }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(failure).toBeInstanceOf(WatchRunError);
    expect((failure as WatchRunError).closeCode).toBe(4403);
    expect((failure as WatchRunError).message).toBe(
      'Airlock closed the connection (4403 "Forbidden"): the token is missing or not valid (export TOKEN=alk_… with a token Airlock issued).',
    );
    expect(events).toEqual([]);
  });

  it('should stream with a good token and end on a GraphQL error for an unknown run', async () => {
    const events: unknown[] = [];
    const unknownRun = Buffer.from('Run:00000000-0000-4000-8000-000000000000').toString('base64');
    await watchRun({ url: wsUrl, token: t.adminToken, runId: unknownRun, onEvent: (event) => events.push(event) });
    expect(events).toMatchObject([{ errors: [{ message: 'Run not found.' }] }]);
  });
});

describe('examples/watch-run.ts with nothing listening', () => {
  it('should read the address from $URL (http means ws), name it in one line with what to do, and exit non-zero', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/watch-run.ts', 'UnVuOng='], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TOKEN: 'alk_not-a-real-token', URL: `http://127.0.0.1:${port}/graphql` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Nothing answers at ws://127.0.0.1:${port}/graphql (ECONNREFUSED): start Airlock with npm start, or set URL (or pass the address after the run id) to where it listens.\n`,
    );
  });

  it('should never print [object Object] for a failure it does not know', () => {
    const odd: Record<string, unknown> = { reason: 'odd' };
    odd.self = odd;
    expect(describeFailure(odd).message).toBe("The subscription failed: <ref *1> { reason: 'odd', self: [Circular *1] }");
  });
});

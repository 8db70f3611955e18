import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * The machine's shared Redis, when `.ci/run` (or the developer) set TEST_REDIS_URL. Tests never
 * flush or restart it: each file publishes under its own channel prefix (`uniquePrefix`). Without
 * it the several-instances tests are reported as not run: `describe.skipIf(!TEST_REDIS_URL)`.
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? null;

/** `redis-server`, for the fault tests that start (and kill) a private Redis of their own. */
export const REDIS_SERVER = (() => {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
})();

/** A channel prefix no other test file (or run) uses. */
export const uniquePrefix = (name: string) => `airlock-test:${name}:${randomBytes(4).toString('hex')}:`;

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

export interface PrivateRedis {
  readonly port: number;
  /** redis://[:password@]127.0.0.1:port */
  readonly url: string;
  readonly pid: () => number | undefined;
  /** Kills the server by its pid (SIGKILL: as abrupt as a crash) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (nothing is kept: `--save ''`). */
  start(): Promise<void>;
}

/** A Redis of the test's own on a free port, started and stopped by pid (never the shared one). */
export async function startPrivateRedis(options: { password?: string } = {}): Promise<PrivateRedis> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed: install the redis-server package');
  const port = await freePort();
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  const url = `redis://${auth}127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
    if (options.password) args.push('--requirepass', options.password);
    child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      const ok = await probe.connect().then(
        () => probe.ping().then((answer) => answer === 'PONG'),
        () => false,
      );
      probe.disconnect();
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`the private redis-server on port ${port} did not answer`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await start();
  return {
    port,
    url,
    pid: () => child?.pid,
    async stop() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null) return;
      const exited = once(running, 'exit');
      process.kill(running.pid!, 'SIGKILL');
      await exited;
    },
    start,
  };
}

/**
 * A Redis of the benchmark's own (`redis-server` on a free port, nothing saved), so that its CPU is
 * the cost of Airlock's messages alone and the machine's shared Redis is never touched.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { startProcess, stopChild } from './children.ts';

export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** True when `redis-server` is installed. */
export const redisServerAvailable = (): boolean => spawnSync('sh', ['-c', 'command -v redis-server']).status === 0;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export async function startRedis(): Promise<BenchRedis> {
  const port = await freePort();
  const child = startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  let notStarted: Error | null = null;
  child.once('error', (error) => (notStarted = error));
  const stop = () => stopChild(child);
  const url = `redis://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 10_000; ; ) {
    if (notStarted) throw notStarted;
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const up = await probe.connect().then(() => true, () => false);
    probe.disconnect();
    if (up) return { url, pid: child.pid!, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server on port ${port} did not answer within 10 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The `subscribers` workload's ramp: what an idle dashboard subscriber costs the Airlock server,
 * against what a held connection costs a bare `ws` server, both measured in the same run the same
 * way (the memory probe: a full GC, then `process.memoryUsage()` and the active resources).
 *
 * Airlock: N graphql-ws clients, one socket and one `runUpdates(filter: { status: [CANCELLED] })`
 * subscription each, as the admin; the filter matches one settled run (so each subscriber's
 * snapshot tells the driver it is subscribed) and nothing busy. Bare: N plain `ws` connections to
 * `bench/bin/bare-ws.ts`. Each server gets a warm-up (100 sockets opened and closed) before its
 * reading at 0; per connection = (reading at N − reading at 0) / N.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAirlock, type DbKind } from '../../lib/airlock.ts';
import { startServer, type Driver } from '../../lib/children.ts';
import { MEMORY_PROBE_NODE_ARGS, readSettledMemory, type SettledMemory } from '../../lib/settled-memory.ts';

/** Sockets opened and closed before the reading at 0 (lazy start-up work is not a subscriber's cost). */
const WARM_UP = 100;
/** Nothing listens there: the ramp's Airlock never calls its provider. */
const NO_PROVIDER = 'http://127.0.0.1:9/v1';

export interface IdleSide {
  readonly zero: SettledMemory;
  readonly atN: SettledMemory;
  readonly rampMs: number;
  readonly rssKbPerConnection: number;
  readonly heapKbPerConnection: number;
  /** Active `Timeout` handles at 0 and at N (a wheel or one interval per instance: not one each). */
  readonly timersAtZero: number;
  readonly timersAtN: number;
}

export interface IdleResult {
  readonly connections: number;
  readonly airlock: IdleSide;
  readonly bare: IdleSide;
}

type Opener = (count: number, label: string) => Promise<{ open: number; rampMs: number }>;

async function measureSide(pid: number, reportFile: string, count: number, label: string, open: Opener, driver: Driver): Promise<IdleSide> {
  const read = () => readSettledMemory(pid, reportFile, 30_000);
  await open(WARM_UP, `${label} warm-up`);
  await driver.request({ type: 'close-all' });
  const zero = await read();
  const { open: opened, rampMs } = await open(count, label);
  if (opened !== count) throw new Error(`${label}: ${opened} of ${count} sockets open`);
  // Let the last handshakes' garbage and timers settle (readSettledMemory pauses 1 s more).
  await sleep(1_000);
  const atN = await read();
  await driver.request({ type: 'close-all' });
  return {
    zero,
    atN,
    rampMs,
    rssKbPerConnection: (atN.rss - zero.rss) / count / 1024,
    heapKbPerConnection: (atN.heapUsed - zero.heapUsed) / count / 1024,
    timersAtZero: zero.resources.Timeout ?? 0,
    timersAtN: atN.resources.Timeout ?? 0,
  };
}

export async function measureIdle(kind: DbKind, driver: Driver, count: number, step: (text: string) => void): Promise<IdleResult> {
  const reportFile = path.join(tmpdir(), `airlock-bench-subscribers-${process.pid}.json`);
  try {
    step('starting the bare ws server');
    const bareServer = await startServer('bench/bin/bare-ws.ts', { BENCH_MEMORY_REPORT: reportFile }, /listening (\d+)/, { nodeArgs: MEMORY_PROBE_NODE_ARGS });
    let bare: IdleSide;
    try {
      const url = `ws://127.0.0.1:${bareServer.ready[1]}`;
      bare = await measureSide(bareServer.pid, reportFile, count, '[subscribers] bare ws', (n, label) => driver.request({ type: 'open-bare', url, count: n, label }), driver);
    } finally {
      await bareServer.stop();
    }

    step('starting Airlock with the memory probe');
    const airlock = await startAirlock(kind, { fakeBaseUrl: NO_PROVIDER, k: 3, env: { BENCH_MEMORY_REPORT: reportFile, LOG_LEVEL: 'warn' }, nodeArgs: MEMORY_PROBE_NODE_ARGS });
    try {
      const filter = { status: [await settledRun(airlock.gql, airlock.configurationId)] };
      const open: Opener = (n, label) => driver.request({ type: 'open-idle', wsUrl: airlock.wsUrl, token: airlock.adminToken, filter, count: n, label });
      return { connections: count, bare, airlock: await measureSide(airlock.server.pid, reportFile, count, '[subscribers] Airlock runUpdates', open, driver) };
    } finally {
      await airlock.stop();
    }
  } finally {
    rmSync(reportFile, { force: true });
  }
}

/**
 * One run, started detached and cancelled at once (or failed first: its provider is unreachable):
 * the one run the idle subscribers' filter matches. Returns the status it ended with.
 */
async function settledRun(gql: <T>(query: string, variables?: Record<string, unknown>) => Promise<T>, configurationId: string): Promise<string> {
  const started = await gql<{ startRun: { id?: string; message?: string } }>(
    `mutation($input: RunAgentInput!) { startRun(input: $input) { ... on Run { id } ... on Error { message } } }`,
    { input: { configurationId, prompt: 'the one run of the idle subscribers’ filter' } },
  );
  const id = started.startRun.id;
  if (!id) throw new Error(`startRun failed: ${JSON.stringify(started)}`);
  await gql(`mutation($id: ID!) { cancelRun(id: $id) { __typename } }`, { id });
  for (let waited = 0; ; waited += 100) {
    const { run } = await gql<{ run: { status: string } }>(`query($id: ID!) { run(id: $id) { status } }`, { id });
    if (run.status !== 'RUNNING') return run.status;
    if (waited > 30_000) throw new Error('the run to cancel is still RUNNING after 30 s');
    await sleep(100);
  }
}

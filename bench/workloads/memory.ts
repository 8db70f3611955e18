/**
 * Workload 4 (memory): what an idle `runEvents` subscription costs the Airlock server (PostgreSQL),
 * and whether subscribe/complete churn leaks. Subscriptions are opened on a run that stays RUNNING
 * (its provider call waits), one graphql-ws connection each, from a separate driver process.
 *
 * The server is started with `--expose-gc` and `bench/lib/memory-probe.ts`: before every reading
 * the harness has it run a full GC and report `process.memoryUsage()`. Per-subscription figures are
 * (reading at N − reading at 0) / N, for RSS and for the V8 heap; churn growth compares the reading
 * after the churn with the one after a warm-up churn of a tenth of it.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createWaitingConfiguration, postgresAvailable, startAirlock, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { MEMORY_PROBE_NODE_ARGS, readSettledMemory } from '../lib/settled-memory.ts';
import { fmt, renderTable } from '../lib/stats.ts';

export interface MemoryOptions {
  readonly levels: readonly number[];
  readonly churnCycles: number;
  readonly churnConnections: number;
}

interface Reading {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
}

export interface MemoryResult {
  readonly options: MemoryOptions;
  readonly kind: DbKind;
  readonly idle: { readonly subscriptions: number; readonly rssKbPerSubscription: number; readonly heapKbPerSubscription: number; readonly reading: Reading }[];
  readonly churn: { readonly cycles: number; readonly before: Reading; readonly after: Reading; readonly rssGrowth: number; readonly heapGrowth: number };
  readonly table: string;
}

export async function runMemory(options: MemoryOptions): Promise<MemoryResult> {
  const kind: DbKind = (await postgresAvailable()) ? 'postgres' : 'pglite';
  const reportFile = path.join(tmpdir(), `airlock-bench-memory-${process.pid}.json`);
  progress('[memory] starting the fake OpenAI server and Airlock');
  const fake = await startServer('bench/bin/fake-openai.ts', {}, /listening (\d+)/);
  const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
  const driver = await startDriver('bench/bin/subscription-driver.ts');
  const airlock = await startAirlock(kind, {
    fakeBaseUrl,
    k: 3,
    env: { BENCH_MEMORY_REPORT: reportFile, LOG_LEVEL: 'warn' },
    nodeArgs: MEMORY_PROBE_NODE_ARGS,
  });
  const read = async (): Promise<Reading> => {
    const { rss, heapUsed, external } = await readSettledMemory(airlock.server.pid, reportFile, 5_000);
    return { rss, heapUsed, external };
  };
  try {
    const configurationId = await createWaitingConfiguration(airlock, fakeBaseUrl, 590_000);
    const base = { wsUrl: airlock.wsUrl, token: airlock.userToken };
    const { runId } = await driver.request<{ runId: string }>({ type: 'start-waiting-run', ...base, configurationId });

    // Churn first, on a server that has not yet held thousands of sockets (a high-water mark would hide growth).
    const warmCycles = Math.max(100, Math.round(options.churnCycles / 10));
    progress(`[memory] warm-up churn: ${warmCycles} subscribe/complete cycles`);
    await driver.request({ type: 'churn', ...base, runId, cycles: warmCycles, connections: options.churnConnections });
    const before = await read();
    progress(`[memory] churn: ${options.churnCycles} subscribe/complete cycles on ${options.churnConnections} connections`);
    const churned = await driver.request<{ cycles: number }>({ type: 'churn', ...base, runId, cycles: options.churnCycles, connections: options.churnConnections });
    const after = await read();

    const zero = await read();
    const idle: MemoryResult['idle'][number][] = [];
    let open = 0;
    for (const level of options.levels) {
      progress(`[memory] opening idle runEvents subscriptions: ${level}`);
      await driver.request({ type: 'open', ...base, runId, count: level - open });
      open = level;
      const reading = await read();
      idle.push({
        subscriptions: level,
        rssKbPerSubscription: (reading.rss - zero.rss) / level / 1024,
        heapKbPerSubscription: (reading.heapUsed - zero.heapUsed) / level / 1024,
        reading,
      });
    }
    await driver.request({ type: 'close-all' });
    await driver.request({ type: 'stop-waiting-run' });
    progressDone();
    const churn = {
      cycles: churned.cycles,
      before,
      after,
      rssGrowth: (after.rss - before.rss) / before.rss,
      heapGrowth: (after.heapUsed - before.heapUsed) / before.heapUsed,
    };
    const table = [
      renderTable(
        ['idle runEvents subscriptions', 'server RSS MB', 'RSS KB / subscription', 'heap MB', 'heap KB / subscription'],
        [
          ['0', fmt(zero.rss / 1048576), '—', fmt(zero.heapUsed / 1048576), '—'],
          ...idle.map((entry) => [String(entry.subscriptions), fmt(entry.reading.rss / 1048576), fmt(entry.rssKbPerSubscription), fmt(entry.reading.heapUsed / 1048576), fmt(entry.heapKbPerSubscription)]),
        ],
      ),
      '',
      renderTable(
        ['churn', 'RSS MB before', 'RSS MB after', 'RSS growth', 'heap MB before', 'heap MB after', 'heap growth'],
        [[
          `${churn.cycles} subscribe/complete cycles`,
          fmt(before.rss / 1048576),
          fmt(after.rss / 1048576),
          `${(churn.rssGrowth * 100).toFixed(1)} %`,
          fmt(before.heapUsed / 1048576),
          fmt(after.heapUsed / 1048576),
          `${(churn.heapGrowth * 100).toFixed(1)} %`,
        ]],
      ),
    ].join('\n');
    return { options, kind, idle, churn, table };
  } finally {
    progressDone();
    await driver.stop();
    await airlock.stop();
    await fake.stop();
    rmSync(reportFile, { force: true });
  }
}

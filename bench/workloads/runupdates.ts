/**
 * Workload 7 (live runs list): R runs in flight (200; quick 60) watched by S `runUpdates`
 * subscribers (100; quick 30) over graphql-ws, one socket each, as an admin (every run visible).
 * Each run makes K tool rounds at a fixed provider latency, so it lives about (K + 1) × latency.
 *
 * Baseline in the same run: the same R runs with no subscriber (server CPU per run), so the CPU a
 * delivered update costs is (CPU with subscribers − CPU without) ÷ updates delivered.
 *
 * Figures: updates delivered per second (over all subscribers); lag from a run's status change
 * to a subscriber = receipt − the run's own timestamp of that change (createdAt for the first
 * update showing it, finishedAt for the update carrying its settled status; server and driver
 * share this machine's clock), p50/p99; the most updates one subscriber received for one run
 * within any 250 ms span (receipt times, so network batching can only raise it); runs whose final
 * state some subscriber never received.
 */
import type { Client } from 'graphql-ws';
import { startAirlock, type DbKind } from '../lib/airlock.ts';
import { startServer } from '../lib/children.ts';
import { cpuMs } from '../lib/proc.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, quantile, renderTable } from '../lib/stats.ts';
import { connectGraphqlWs } from '../lib/ws-client.ts';

export interface RunUpdatesOptions {
  readonly runs: number;
  readonly subscribers: number;
  readonly rounds: number;
  readonly latencyMs: number;
}

export interface RunUpdatesResult {
  readonly options: RunUpdatesOptions;
  readonly kind: DbKind;
  readonly updates: number;
  readonly updatesPerSecond: number;
  readonly lag: { readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number };
  readonly finalLag: { readonly p50: number; readonly p99: number };
  /** Lag of the first update of each run (its creation): never held back by the coalescing window. */
  readonly createdLag: { readonly p50: number; readonly p99: number };
  readonly maxUpdatesPerRunPer250ms: number;
  readonly missingFinals: number;
  readonly serverCpuMs: { readonly withoutSubscribers: number | null; readonly withSubscribers: number | null };
  readonly cpuMsPerUpdate: number | null;
  readonly table: string;
}

const SETTLED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
const RUN_UPDATES = `subscription($filter: RunFilter) { runUpdates(filter: $filter) { snapshot run { id status createdAt finishedAt iterations usage { totalTokens } } } }`;
const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) { __typename } }`;

interface Receipt {
  readonly at: number;
  readonly runId: string;
  readonly status: string;
  readonly createdAt: number;
  readonly finishedAt: number | null;
  readonly snapshot: boolean;
}

function runAll(clients: readonly Client[], count: number, configurationId: string): Promise<void[]> {
  return Promise.all(
    Array.from(
      { length: count },
      (_, index) =>
        new Promise<void>((resolve, reject) => {
          clients[index % clients.length]!.subscribe(
            { query: RUN_AGENT, variables: { input: { configurationId, prompt: `run ${index}` } } },
            { next: () => {}, error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))), complete: () => resolve() },
          );
        }),
    ),
  );
}

export async function runRunUpdates(options: RunUpdatesOptions): Promise<RunUpdatesResult> {
  const kind: DbKind = 'pglite';
  const step = (text: string) => progress(`[runupdates] ${text}`);
  step('starting the fake OpenAI server and Airlock');
  const fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_LATENCY_MS: String(options.latencyMs) }, /listening (\d+)/);
  const airlock = await startAirlock(kind, { fakeBaseUrl: `http://127.0.0.1:${fake.ready[1]}/v1`, k: options.rounds }).catch(async (error) => {
    await fake.stop();
    throw error;
  });
  const sockets: Client[] = [];
  try {
    const drivers = await Promise.all(Array.from({ length: 20 }, () => connectGraphqlWs(airlock.wsUrl, airlock.userToken)));
    sockets.push(...drivers);

    step(`baseline: ${options.runs} runs, no subscriber`);
    let before = cpuMs(airlock.server.pid);
    await runAll(drivers, options.runs, airlock.configurationId);
    let after = cpuMs(airlock.server.pid);
    const withoutSubscribers = before === null || after === null ? null : after - before;

    step(`${options.subscribers} runUpdates subscribers`);
    const watchers = await Promise.all(Array.from({ length: options.subscribers }, () => connectGraphqlWs(airlock.wsUrl, airlock.adminToken)));
    sockets.push(...watchers);
    const receipts: Receipt[][] = watchers.map(() => []);
    const startedAt = Date.now();
    const snapshotsRead = watchers.map(
      (client, index) =>
        new Promise<void>((resolve, reject) => {
          let first = true;
          client.subscribe(
            // Only the runs of the measured batch: the baseline's runs are settled and would fill the snapshot.
            { query: RUN_UPDATES, variables: { filter: { createdFrom: new Date(startedAt).toISOString() } } },
            {
              next: ({ data, errors }) => {
                if (errors) return reject(new Error(JSON.stringify(errors)));
                const update = (data as any).runUpdates;
                receipts[index]!.push({
                  at: Date.now(),
                  runId: update.run.id,
                  status: update.run.status,
                  createdAt: Date.parse(update.run.createdAt),
                  finishedAt: update.run.finishedAt ? Date.parse(update.run.finishedAt) : null,
                  snapshot: update.snapshot,
                });
                if (first) (first = false), resolve();
              },
              error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
              complete: () => {},
            },
          );
          // An empty snapshot sends nothing: the subscription is registered once the server acknowledges it.
          setTimeout(resolve, 500);
        }),
    );
    await Promise.all(snapshotsRead);

    step(`${options.runs} runs in flight with ${options.subscribers} subscribers`);
    before = cpuMs(airlock.server.pid);
    const measuredFrom = Date.now();
    await runAll(drivers, options.runs, airlock.configurationId);
    // Let the trailing updates arrive (at most one coalescing window after the last run ended).
    const deadline = Date.now() + 10_000;
    const finalsSeen = () => receipts.reduce((sum, list) => sum + list.filter((receipt) => SETTLED.has(receipt.status)).length, 0);
    while (finalsSeen() < options.runs * options.subscribers && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    after = cpuMs(airlock.server.pid);
    const withSubscribers = before === null || after === null ? null : after - before;
    const lastReceipt = receipts.flat().reduce((latest, receipt) => Math.max(latest, receipt.at), measuredFrom);

    const lags: number[] = [];
    const finalLags: number[] = [];
    const createdLags: number[] = [];
    let maxPerWindow = 0;
    let missingFinals = 0;
    for (const list of receipts) {
      const perRun = new Map<string, Receipt[]>();
      for (const receipt of list) if (!receipt.snapshot) perRun.set(receipt.runId, [...(perRun.get(receipt.runId) ?? []), receipt]);
      for (const [, runReceipts] of perRun) {
        lags.push(runReceipts[0]!.at - runReceipts[0]!.createdAt);
        createdLags.push(runReceipts[0]!.at - runReceipts[0]!.createdAt);
        const final = runReceipts.find((receipt) => SETTLED.has(receipt.status));
        if (final && final.finishedAt !== null) {
          lags.push(final.at - final.finishedAt);
          finalLags.push(final.at - final.finishedAt);
        } else missingFinals += 1;
        for (let i = 0; i < runReceipts.length; i++) {
          let j = i;
          while (j + 1 < runReceipts.length && runReceipts[j + 1]!.at - runReceipts[i]!.at < 250) j += 1;
          maxPerWindow = Math.max(maxPerWindow, j - i + 1);
        }
      }
      missingFinals += Math.max(0, options.runs - perRun.size);
    }
    const updates = receipts.reduce((sum, list) => sum + list.filter((receipt) => !receipt.snapshot).length, 0);
    const seconds = (lastReceipt - measuredFrom) / 1000;
    const cpuMsPerUpdate = withSubscribers === null || withoutSubscribers === null || updates === 0 ? null : (withSubscribers - withoutSubscribers) / updates;
    const lag = { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: lags.reduce((max, value) => Math.max(max, value), 0), samples: lags.length };
    const finalLag = { p50: quantile(finalLags, 0.5), p99: quantile(finalLags, 0.99) };
    const createdLag = { p50: quantile(createdLags, 0.5), p99: quantile(createdLags, 0.99) };
    const table = renderTable(
      ['runs', 'subscribers', 'updates', 'updates/s', 'lag p50 ms', 'lag p99 ms', 'created lag p50/p99', 'final lag p50/p99', 'max/run/250ms', 'missing finals', 'server CPU s (none → with)', 'CPU ms/update'],
      [
        [
          String(options.runs),
          String(options.subscribers),
          String(updates),
          fmt(updates / seconds),
          fmt(lag.p50),
          fmt(lag.p99),
          `${fmt(createdLag.p50)} / ${fmt(createdLag.p99)}`,
          `${fmt(finalLag.p50)} / ${fmt(finalLag.p99)}`,
          String(maxPerWindow),
          String(missingFinals),
          `${fmt((withoutSubscribers ?? 0) / 1000)} → ${fmt((withSubscribers ?? 0) / 1000)}`,
          fmt(cpuMsPerUpdate, 3),
        ],
      ],
    );
    progressDone();
    return {
      options,
      kind,
      updates,
      updatesPerSecond: updates / seconds,
      lag,
      finalLag,
      createdLag,
      maxUpdatesPerRunPer250ms: maxPerWindow,
      missingFinals,
      serverCpuMs: { withoutSubscribers, withSubscribers },
      cpuMsPerUpdate,
      table,
    };
  } finally {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await airlock.stop();
    await fake.stop();
  }
}

export function runUpdatesTargets(result: RunUpdatesResult): { target: string; figure: string; met: boolean | null }[] {
  return [
    { target: 'p99 lag from a status change < 100 ms', figure: `p99 ${fmt(result.lag.p99)} ms (creation: p99 ${fmt(result.createdLag.p99)} ms; settled status, which may wait out one 250 ms window: p99 ${fmt(result.finalLag.p99)} ms)`, met: result.lag.p99 < 100 },
    {
      target: '≤ 1 update per run per 250 ms, every final state delivered',
      figure: `at most ${result.maxUpdatesPerRunPer250ms} per run within 250 ms (receipt times); ${result.missingFinals} final states missing`,
      met: result.maxUpdatesPerRunPer250ms <= 1 && result.missingFinals === 0,
    },
  ];
}

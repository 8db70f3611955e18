/**
 * Load scenario (issue 7): C concurrent runs and S idle subscriptions for D seconds on PostgreSQL —
 * no error, no lost step, bounded memory. Full size: 200 runs in flight, 1 000 idle `runEvents`
 * subscriptions, 60 s measured after 60 s of warm-up at the same load (see `warmUpSeconds`).
 *
 * - One Airlock server on a private PostgreSQL database, started with `--expose-gc` and
 *   `bench/lib/memory-probe.ts` (settled heap readings before and after the load); the fake OpenAI
 *   server answers every call after a fixed latency (20 ms by default) and scripts K = 3 tool rounds.
 * - Idle subscriptions: S graphql-ws connections with one `runEvents` each, spread over S / 100 runs
 *   that stay RUNNING (their provider call waits 590 s), opened before the clock starts, held for
 *   the whole load from `bench/bin/load-driver.ts` (the watcher process). At the end the runs are
 *   cancelled: each subscription must still be open, have had no error, and then receive exactly
 *   its run's stored steps and RunFinishedEvent CANCELLED.
 * - Runs: C workers in another driver process (the runner), one graphql-ws connection each, as a
 *   non-admin user, calling `runAgent` back to back through the warm-up and the D seconds. Every
 *   run's live steps are compared afterwards with its stored steps read over GraphQL
 *   (`nodes(ids)` → `steps`); runs/s and run times are the measured phase's.
 * - Memory: the server's VmRSS every second; bounded = the median of the last window (10 s, or a
 *   third of a shorter load) ≤ 1.2 × the median of the first window of the measured phase; and the
 *   settled heap after the load (idle subscriptions still open) ≤ 1.2 × the one before the warm-up.
 *
 * Its parts: `load/options.ts` (what is asked, checked first), `load/phase.ts` (the load and its
 * per-second readings), `load/verification.ts` (stored against streamed, the idle subscriptions, the
 * server log), `load/result.ts` (the table and the targets).
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunRecord } from '../bin/load-driver.ts';
import { createWaitingConfiguration, postgresAvailable, startAirlock } from '../lib/airlock.ts';
import { startDriver, startServer, type Driver, type ServerProcess } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { MEMORY_PROBE_NODE_ARGS, readSettledMemory } from '../lib/settled-memory.ts';
import { quantile } from '../lib/stats.ts';
import { checkLoadOptions, WAITING_LATENCY_MS, WATCHERS_PER_RUN, type LoadOptions } from './load/options.ts';
import { MB, rssWindows, runLoadPhase } from './load/phase.ts';
import { loadTargets, renderLoad, type LoadFigures, type LoadResult } from './load/result.ts';
import { readStoredRuns, verifyIdle, verifyRuns, watchServerLog, type IdleWatch } from './load/verification.ts';

/** How long the memory probe may take to answer, ms. */
const PROBE_TIMEOUT_MS = 10_000;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (!(await postgresAvailable())) throw new Error('no PostgreSQL server answers at BENCH_DATABASE_URL: the load scenario runs on PostgreSQL only');
  checkLoadOptions(options);

  const reportFile = path.join(tmpdir(), `airlock-bench-load-${process.pid}.json`);
  const stops: (() => Promise<void>)[] = [];
  let fake: ServerProcess | null = null;
  try {
    progress('[load] starting the fake OpenAI server, the drivers and Airlock (PostgreSQL)');
    fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: String(options.latencyMs) }, /listening (\d+)/);
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
    const watcher: Driver = await startDriver('bench/bin/load-driver.ts');
    stops.push(() => watcher.stop());
    const runner: Driver = await startDriver('bench/bin/load-driver.ts');
    stops.push(() => runner.stop());
    const airlock = await startAirlock('postgres', {
      fakeBaseUrl,
      k: options.k,
      env: { BENCH_MEMORY_REPORT: reportFile, LOG_LEVEL: 'warn' },
      nodeArgs: MEMORY_PROBE_NODE_ARGS,
    });
    stops.push(() => airlock.stop());
    const pid = airlock.server.pid;
    // Every warning or error the server logs during the scenario.
    const serverLog = watchServerLog(airlock.server.child);

    // ── idle subscriptions, opened before the clock starts ──
    const waitingConfiguration = await createWaitingConfiguration(airlock, fakeBaseUrl, WAITING_LATENCY_MS);
    const base = { wsUrl: airlock.wsUrl, token: airlock.userToken };
    const waitingCount = Math.max(1, Math.ceil(options.subscriptions / WATCHERS_PER_RUN));
    const { runIds: waitingRunIds } = await watcher.request<{ runIds: string[] }>({ type: 'start-waiting-runs', ...base, configurationId: waitingConfiguration, count: waitingCount });
    progress(`[load] opening ${options.subscriptions} idle runEvents subscriptions on ${waitingCount} waiting runs`);
    await watcher.request({ type: 'open-idle', ...base, runIds: waitingRunIds, count: options.subscriptions });

    // ── the runners: connections, one first run each (JIT, pools), the settled reading before ──
    progress(`[load] connecting ${options.concurrency} runners; a first run each`);
    await runner.request({ type: 'connect-runners', ...base, count: options.concurrency });
    const first = await runner.request<{ runs: RunRecord[] }>({ type: 'run-load', configurationId: airlock.configurationId, durationMs: 0, runsPerWorker: 1 });
    const firstErrors = first.runs.filter((run) => run.error !== null);
    if (firstErrors.length > 0) throw new Error(`${firstErrors.length} of the first runs failed, first: ${firstErrors[0]!.error}`);

    // Before the warm-up: a forced GC also shrinks the heap V8 grew, so none may come between the
    // warm-up and the measured phase.
    const settledBefore = await readSettledMemory(pid, reportFile, PROBE_TIMEOUT_MS);
    const idleBefore = await watcher.request<{ events: number; open: number }>({ type: 'idle-status' });
    if (idleBefore.open !== options.subscriptions) throw new Error(`only ${idleBefore.open} of ${options.subscriptions} idle subscriptions are open before the load`);

    // ── the load: warm-up then the measured phase, one uninterrupted stream of runs ──
    const phase = await runLoadPhase(runner, pid, airlock.configurationId, options);

    // ── after the load: idle subscriptions still there, settled heap, then end the waiting runs ──
    const idleAfter = await watcher.request<{ subscriptions: number; open: number; errors: number; socketsClosed: number; events: number; firstError: string | null }>({ type: 'idle-status' });
    progress('[load] settled memory reading after the load');
    const settledAfter = await readSettledMemory(pid, reportFile, PROBE_TIMEOUT_MS);
    progress(`[load] cancelling the ${waitingCount} waiting runs; every idle subscription must see the end`);
    for (const id of waitingRunIds) {
      await airlock.gql(`mutation($id: ID!) { cancelRun(id: $id) { __typename } }`, { id });
    }
    const { watches } = await watcher.request<{ watches: IdleWatch[] }>({ type: 'finish-idle', timeoutMs: 30_000 });
    const waitingStored = await readStoredRuns(airlock, waitingRunIds);

    // ── verification: every run's stored steps against the ones streamed live ──
    // Every run is verified, warm-up included; throughput and run times are the measured phase's.
    const runs = [...first.runs, ...phase.runs];
    const ids = [...new Set(runs.map((run) => run.id).filter((id): id is string => id !== null))];
    const stored = await readStoredRuns(airlock, ids, (done) => progress(`[load] verifying stored steps: ${done}/${ids.length} runs`));
    progressDone();

    const examples: string[] = [];
    const note = (text: string) => examples.length < 8 && examples.push(text);
    const checked = verifyRuns(runs, stored, options.k, note);
    const { idleErrors, endedCleanly } = verifyIdle(watches, waitingStored, waitingRunIds, note);
    const idleDroppedDuringLoad = options.subscriptions - idleAfter.open;
    if (idleDroppedDuringLoad > 0) note(`${idleDroppedDuringLoad} idle subscriptions were no longer open at the end of the load (first error: ${idleAfter.firstError})`);
    for (const line of serverLog.examples) note(`server log: ${line}`);
    const idleProblems = Math.max(idleErrors, idleDroppedDuringLoad);

    const rss = rssWindows(phase, options.durationSeconds);
    const runMs = phase.measured.map((run) => run.ms);
    const result: LoadFigures = {
      options,
      runs: {
        completed: runs.filter((run) => run.error === null).length,
        total: runs.length,
        measured: phase.measured.length,
        warmUp: runs.length - phase.measured.length,
        perSecond: phase.runsPerSecond,
        p50Ms: quantile(runMs, 0.5),
        p95Ms: quantile(runMs, 0.95),
        p99Ms: quantile(runMs, 0.99),
      },
      steps: { streamed: checked.streamedSteps, stored: checked.storedSteps, perSecond: phase.stepsPerSecond },
      errors: {
        total: checked.runErrors + checked.unexpectedSteps + idleProblems + serverLog.error,
        runs: checked.runErrors,
        unexpectedSteps: checked.unexpectedSteps,
        idle: idleProblems,
        serverErrorLines: serverLog.error,
        serverWarnLines: serverLog.warn,
        examples,
      },
      lostSteps: checked.lost,
      duplicateSteps: checked.duplicates,
      outOfOrderSteps: checked.outOfOrder,
      idle: {
        subscriptions: options.subscriptions,
        waitingRuns: waitingCount,
        openAtEnd: idleAfter.open,
        eventsDuringLoad: idleAfter.events - idleBefore.events,
        endedCleanly,
      },
      memory: {
        windowSeconds: rss.windowSeconds,
        rssStartMb: phase.rssStart / MB,
        rssPeakMb: rss.rssPeakMb,
        rssFirstWindowMb: rss.rssFirstWindowMb,
        rssLastWindowMb: rss.rssLastWindowMb,
        rssGrowth: rss.rssGrowth,
        vmHwmMb: phase.vmHwm === null ? null : phase.vmHwm / MB,
        settledBefore,
        settledAfter,
        heapGrowth: settledAfter.heapUsed / settledBefore.heapUsed - 1,
        samples: phase.samples,
      },
      serverCpuPercent: phase.serverCpuPercent,
    };
    return { ...result, table: renderLoad(result), targets: loadTargets(result) };
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await fake?.stop();
    rmSync(reportFile, { force: true });
  }
}

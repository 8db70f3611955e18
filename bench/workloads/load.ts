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
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunRecord } from '../bin/load-driver.ts';
import type { TargetCheck } from '../lib/targets.ts';
import { createWaitingConfiguration, postgresAvailable, startAirlock, type AirlockUnderTest } from '../lib/airlock.ts';
import { startDriver, startServer, type Driver, type ServerProcess } from '../lib/children.ts';
import { cpuMs, peakRssBytes, rssBytes } from '../lib/proc.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, median, quantile } from '../lib/stats.ts';

export interface LoadOptions {
  /** Runs in flight: one worker (and one graphql-ws connection) each. */
  readonly concurrency: number;
  /** Idle runEvents subscriptions, one graphql-ws connection each. */
  readonly subscriptions: number;
  readonly durationSeconds: number;
  /**
   * Load at the same concurrency before the clock starts, in the same uninterrupted stream of runs:
   * the server's RSS grows for tens of seconds under this load (V8 sizes its heap to the allocation
   * rate) and then stays flat, and "bounded" compares windows of the steady phase, not the ramp.
   */
  readonly warmUpSeconds: number;
  /** Latency of every call to the fake provider, ms. */
  readonly latencyMs: number;
  /** Tool rounds per run (K): 2 (K + 1) + K stored steps. */
  readonly k: number;
}

interface Reading {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

export interface LoadResult {
  readonly options: LoadOptions;
  readonly runs: {
    readonly completed: number;
    readonly total: number;
    /** Runs started in the measured phase (their times make the percentiles). */
    readonly measured: number;
    /** Runs started during the warm-up (verified like the others, not in runs/s or run times). */
    readonly warmUp: number;
    readonly perSecond: number;
    readonly p50Ms: number;
    readonly p95Ms: number;
    readonly p99Ms: number;
  };
  readonly steps: { readonly streamed: number; readonly stored: number; readonly perSecond: number };
  readonly errors: {
    readonly total: number;
    readonly runs: number;
    readonly unexpectedSteps: number;
    readonly idle: number;
    readonly serverErrorLines: number;
    readonly serverWarnLines: number;
    readonly examples: string[];
  };
  readonly lostSteps: number;
  readonly duplicateSteps: number;
  readonly outOfOrderSteps: number;
  readonly idle: {
    readonly subscriptions: number;
    readonly waitingRuns: number;
    readonly openAtEnd: number;
    readonly eventsDuringLoad: number;
    readonly endedCleanly: number;
  };
  readonly memory: {
    readonly windowSeconds: number;
    readonly rssStartMb: number;
    readonly rssPeakMb: number;
    readonly rssFirstWindowMb: number;
    readonly rssLastWindowMb: number;
    readonly rssGrowth: number;
    readonly vmHwmMb: number | null;
    readonly settledBefore: Reading;
    readonly settledAfter: Reading;
    readonly heapGrowth: number;
    readonly samples: { readonly t: number; readonly rssMb: number }[];
  };
  readonly serverCpuPercent: number | null;
  readonly table: string;
  readonly targets: TargetCheck[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MB = 1024 * 1024;
/** Subscriptions per waiting run. */
const WATCHERS_PER_RUN = 100;
/** The waiting runs' provider call (the load must end well before it answers). */
const WAITING_LATENCY_MS = 590_000;
const BOUND = 1.2;

/**
 * A full page means more steps than expected. The server costs `nodes(ids)` by the ids given and
 * each step page by its `first`: RUNS_PER_READ × STEPS_PAGE steps must stay within its cost limit.
 */
const STEPS_PAGE = 40;
const RUNS_PER_READ = 10;
const STEPS_QUERY = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Run {
  id status auditIncomplete steps(first: ${STEPS_PAGE}) { edges { node { sequence kind } } }
} } }`;

interface StoredRun {
  readonly id: string;
  readonly status: string;
  readonly auditIncomplete: boolean;
  readonly steps: { readonly sequence: number; readonly kind: string }[];
}

/** The open-file limit this process (and so every child it starts) runs under. */
function openFileLimit(): number | null {
  try {
    const match = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? (match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1])) : null;
  } catch {
    return null;
  }
}

/** The K-round script as stored: REQUEST, LLM, TOOL per round, then REQUEST, LLM. */
function expectedSteps(k: number): string[] {
  const kinds = [...Array.from({ length: k }, () => ['REQUEST', 'LLM', 'TOOL']).flat(), 'REQUEST', 'LLM'];
  return kinds.map((kind, index) => `${index + 1}:${kind}`);
}

async function readStoredRuns(airlock: AirlockUnderTest, ids: readonly string[], onBatch?: (done: number) => void): Promise<Map<string, StoredRun>> {
  const stored = new Map<string, StoredRun>();
  const batches: string[][] = [];
  for (let index = 0; index < ids.length; index += RUNS_PER_READ) batches.push(ids.slice(index, index + RUNS_PER_READ));
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const data = await airlock.gql<{ nodes: (null | { id: string; status: string; auditIncomplete: boolean; steps: { edges: { node: { sequence: number; kind: string } }[] } })[] }>(
          STEPS_QUERY,
          { ids: batch },
        );
        for (const node of data.nodes) {
          if (!node) continue;
          if (node.steps.edges.length >= STEPS_PAGE) throw new Error(`run ${node.id} has ${STEPS_PAGE} steps or more`);
          stored.set(node.id, { id: node.id, status: node.status, auditIncomplete: node.auditIncomplete, steps: node.steps.edges.map((edge) => edge.node) });
        }
        onBatch?.(stored.size);
      }
    }),
  );
  return stored;
}

/** A settled reading: the probe in the server runs a full GC and writes process.memoryUsage(). */
async function settledReading(pid: number, reportFile: string): Promise<Reading> {
  rmSync(reportFile, { force: true });
  await sleep(1_000);
  process.kill(pid, 'SIGUSR2');
  for (let attempt = 0; attempt < 200; attempt++) {
    await sleep(50);
    try {
      const usage = JSON.parse(readFileSync(reportFile, 'utf8')) as Reading;
      return { rss: usage.rss, heapTotal: usage.heapTotal, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers };
    } catch {
      // not written yet
    }
  }
  throw new Error('the memory probe did not answer');
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (!(await postgresAvailable())) throw new Error('no PostgreSQL server answers at BENCH_DATABASE_URL: the load scenario runs on PostgreSQL only');
  if (!(Number.isInteger(options.durationSeconds) && options.durationSeconds >= 3 && Number.isInteger(options.warmUpSeconds) && options.warmUpSeconds >= 0)) {
    throw new Error(`the load lasts a whole number of seconds (≥ 3) after a whole number of warm-up seconds: got ${options.durationSeconds} and ${options.warmUpSeconds}`);
  }
  if ((options.durationSeconds + options.warmUpSeconds) * 1000 > WAITING_LATENCY_MS - 120_000) {
    throw new Error(`warm-up + load must stay below ${(WAITING_LATENCY_MS - 120_000) / 1000} s (the idle runs wait ${WAITING_LATENCY_MS / 1000} s)`);
  }
  // Each socket is a descriptor on both sides: the server holds S + C + 1 client sockets, C provider
  // sockets, its database pool and its modules; the watcher S. Ask for a margin on top.
  const descriptors = options.subscriptions + 2 * options.concurrency + 200;
  const limit = openFileLimit();
  if (limit !== null && limit < descriptors) {
    throw new Error(`the open-file limit is ${limit}, the load needs about ${descriptors} descriptors per process: raise it (ulimit -n ${Math.max(4096, descriptors * 2)}) and run again`);
  }

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
      nodeArgs: ['--expose-gc', '--import', 'tsx', '--import', './bench/lib/memory-probe.ts'],
    });
    stops.push(() => airlock.stop());
    const pid = airlock.server.pid;

    // Every warning or error the server logs during the scenario (pino JSON lines on stdout).
    const serverLog = { warn: 0, error: 0, examples: [] as string[] };
    airlock.server.child.stdout!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
        if (level >= 50) serverLog.error += 1;
        else if (level >= 40) serverLog.warn += 1;
        if (level >= 40 && serverLog.examples.length < 5) serverLog.examples.push(line.slice(0, 500));
      }
    });

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
    const settledBefore = await settledReading(pid, reportFile);
    const idleBefore = await watcher.request<{ events: number; open: number }>({ type: 'idle-status' });
    if (idleBefore.open !== options.subscriptions) throw new Error(`only ${idleBefore.open} of ${options.subscriptions} idle subscriptions are open before the load`);

    // ── the load: warm-up then the measured phase, one uninterrupted stream of runs ──
    const warmUpMs = options.warmUpSeconds * 1000;
    const durationMs = options.durationSeconds * 1000;
    const endSecond = options.warmUpSeconds + options.durationSeconds;
    let cpuBefore = cpuMs(pid);
    let rssStart = rssBytes(pid) ?? Number.NaN;
    const startedAt = performance.now();
    const load = runner.request<{ wallMs: number; runs: RunRecord[] }>({ type: 'run-load', configurationId: airlock.configurationId, durationMs: warmUpMs + durationMs, runsPerWorker: null });
    let loadDone = false;
    void load.then(
      () => (loadDone = true),
      () => (loadDone = true),
    );
    /** t: seconds since the start of the measured phase (negative during the warm-up). */
    const samples: { t: number; rssMb: number }[] = [];
    let measuredStartedAt = warmUpMs === 0 ? startedAt : Number.NaN;
    const atStart = { finished: 0, steps: 0 };
    let atEnd: { finished: number; steps: number } | null = null;
    for (let second = 1; !loadDone; second++) {
      await Promise.race([sleep(startedAt + second * 1000 - performance.now()), load.catch(() => undefined)]);
      if (loadDone) break;
      const elapsed = (performance.now() - startedAt) / 1000;
      const rss = rssBytes(pid);
      const status = await runner.request<{ finished: number; inFlight: number; errors: number; steps: number }>({ type: 'load-status' });
      if (second === options.warmUpSeconds) {
        measuredStartedAt = performance.now();
        cpuBefore = cpuMs(pid);
        rssStart = rss ?? Number.NaN;
        Object.assign(atStart, { finished: status.finished, steps: status.steps });
      }
      if (second === endSecond) atEnd = { finished: status.finished, steps: status.steps };
      const t = elapsed - options.warmUpSeconds;
      if (rss !== null && t <= options.durationSeconds + 0.5) samples.push({ t, rssMb: rss / MB });
      const phase = t <= 0 ? `warm-up ${Math.round(elapsed)}/${options.warmUpSeconds} s` : t > options.durationSeconds ? `${options.durationSeconds}/${options.durationSeconds} s (draining)` : `${Math.round(t)}/${options.durationSeconds} s`;
      progress(`[load] ${phase} · runs ${status.finished} · in flight ${status.inFlight} · steps ${status.steps} · errors ${status.errors} · server RSS ${fmt((rss ?? Number.NaN) / MB)} MB`);
    }
    const loaded = await load;
    const cpuAfter = cpuMs(pid);
    const measuredMs = performance.now() - measuredStartedAt;
    const vmHwm = peakRssBytes(pid);

    // ── after the load: idle subscriptions still there, settled heap, then end the waiting runs ──
    const idleAfter = await watcher.request<{ subscriptions: number; open: number; errors: number; socketsClosed: number; events: number; firstError: string | null }>({ type: 'idle-status' });
    progress('[load] settled memory reading after the load');
    const settledAfter = await settledReading(pid, reportFile);
    progress(`[load] cancelling the ${waitingCount} waiting runs; every idle subscription must see the end`);
    for (const id of waitingRunIds) {
      await airlock.gql(`mutation($id: ID!) { cancelRun(id: $id) { __typename } }`, { id });
    }
    const { watches } = await watcher.request<{ watches: { runIndex: number; steps: number[]; finished: string | null; completed: boolean; error: string | null; socketClosed: boolean }[] }>({
      type: 'finish-idle',
      timeoutMs: 30_000,
    });
    const waitingStored = await readStoredRuns(airlock, waitingRunIds);

    // ── verification: every run's stored steps against the ones streamed live ──
    // Every run is verified, warm-up included; throughput and run times are the measured phase's.
    const runs = [...first.runs, ...loaded.runs];
    const measured = loaded.runs.filter((run) => run.startMs >= warmUpMs);
    const ids = [...new Set(runs.map((run) => run.id).filter((id): id is string => id !== null))];
    const stored = await readStoredRuns(airlock, ids, (done) => progress(`[load] verifying stored steps: ${done}/${ids.length} runs`));
    progressDone();

    const expected = expectedSteps(options.k).join(',');
    const examples: string[] = [];
    const note = (text: string) => examples.length < 8 && examples.push(text);
    let runErrors = 0;
    let unexpectedSteps = 0;
    let lost = 0;
    let duplicates = 0;
    let outOfOrder = 0;
    let storedSteps = 0;
    let streamedSteps = 0;
    for (const run of runs) {
      streamedSteps += run.steps.length;
      const row = run.id ? stored.get(run.id) : undefined;
      if (run.error !== null || !row || row.status !== 'COMPLETED' || row.auditIncomplete) {
        runErrors += 1;
        note(`run ${run.id ?? '(not started)'}: ${run.error ?? (row ? `stored as ${row.status}${row.auditIncomplete ? ', audit incomplete' : ''}` : 'not found in storage')}`);
      }
      // Duplicates and order, as received.
      const seen = new Set<number>();
      let last = 0;
      for (const step of run.steps) {
        const sequence = Number(step.split(':')[0]);
        if (seen.has(sequence)) {
          duplicates += 1;
          continue;
        }
        seen.add(sequence);
        if (sequence < last) outOfOrder += 1;
        last = Math.max(last, sequence);
      }
      if (!row) continue;
      storedSteps += row.steps.length;
      // Lost: stored but not streamed, streamed but not stored, or a hole in the stored 1..max.
      const storedKeys = new Set(row.steps.map((step) => `${step.sequence}:${step.kind}`));
      const streamedKeys = new Set(run.steps);
      const holes = row.steps.length === 0 ? 0 : Math.max(...row.steps.map((step) => step.sequence)) - new Set(row.steps.map((step) => step.sequence)).size;
      const notStreamed = [...storedKeys].filter((key) => !streamedKeys.has(key)).length;
      const notStored = [...streamedKeys].filter((key) => !storedKeys.has(key)).length;
      if (notStreamed + notStored + holes > 0) note(`run ${run.id}: ${notStreamed} stored steps not streamed, ${notStored} streamed steps not stored, ${holes} holes`);
      lost += notStreamed + notStored + holes;
      if ([...storedKeys].join(',') !== expected) {
        unexpectedSteps += 1;
        note(`run ${run.id}: stored steps ${[...storedKeys].join(',')} instead of ${expected}`);
      }
    }

    // Idle subscriptions: open and error-free through the load, then their run's steps and its end.
    let idleErrors = 0;
    let endedCleanly = 0;
    for (const watch of watches) {
      const runStored = waitingStored.get(waitingRunIds[watch.runIndex]!);
      const storedSequences = runStored?.steps.map((step) => step.sequence).join(',');
      const ok = watch.error === null && !watch.socketClosed && watch.completed && watch.finished === 'CANCELLED' && runStored?.status === 'CANCELLED' && watch.steps.join(',') === storedSequences;
      if (ok) endedCleanly += 1;
      else {
        idleErrors += 1;
        note(`idle subscription on waiting run ${watch.runIndex}: error ${watch.error}, socket closed ${watch.socketClosed}, completed ${watch.completed}, finished ${watch.finished}, steps [${watch.steps}] vs stored [${storedSequences}] (${runStored?.status})`);
      }
    }
    const idleDroppedDuringLoad = options.subscriptions - idleAfter.open;
    if (idleDroppedDuringLoad > 0) note(`${idleDroppedDuringLoad} idle subscriptions were no longer open at the end of the load (first error: ${idleAfter.firstError})`);
    for (const line of serverLog.examples) note(`server log: ${line}`);

    const serverErrorLines = serverLog.error;
    const errorsTotal = runErrors + unexpectedSteps + Math.max(idleErrors, idleDroppedDuringLoad) + serverErrorLines;

    // ── memory ──
    const windowSeconds = Math.min(10, options.durationSeconds / 3);
    const firstWindow = samples.filter((sample) => sample.t > 0 && sample.t <= windowSeconds + 0.5).map((sample) => sample.rssMb);
    const lastWindow = samples.filter((sample) => sample.t >= options.durationSeconds - windowSeconds - 0.5).map((sample) => sample.rssMb);
    const rssFirst = median(firstWindow);
    const rssLast = median(lastWindow);
    const rssPeak = Math.max(rssStart / MB, ...samples.map((sample) => sample.rssMb));
    const rssGrowth = rssLast / rssFirst - 1;
    const heapGrowth = settledAfter.heapUsed / settledBefore.heapUsed - 1;

    const completed = runs.filter((run) => run.error === null).length;
    // Throughput of the measured phase: runs and steps that ended between its first and last second.
    const end = atEnd ?? { finished: loaded.runs.length, steps: loaded.runs.reduce((sum, run) => sum + run.steps.length, 0) };
    const runMs = measured.map((run) => run.ms);
    const result: Omit<LoadResult, 'table' | 'targets'> = {
      options,
      runs: {
        completed,
        total: runs.length,
        measured: measured.length,
        warmUp: runs.length - measured.length,
        perSecond: (end.finished - atStart.finished) / options.durationSeconds,
        p50Ms: quantile(runMs, 0.5),
        p95Ms: quantile(runMs, 0.95),
        p99Ms: quantile(runMs, 0.99),
      },
      steps: { streamed: streamedSteps, stored: storedSteps, perSecond: (end.steps - atStart.steps) / options.durationSeconds },
      errors: {
        total: errorsTotal,
        runs: runErrors,
        unexpectedSteps,
        idle: Math.max(idleErrors, idleDroppedDuringLoad),
        serverErrorLines,
        serverWarnLines: serverLog.warn,
        examples,
      },
      lostSteps: lost,
      duplicateSteps: duplicates,
      outOfOrderSteps: outOfOrder,
      idle: {
        subscriptions: options.subscriptions,
        waitingRuns: waitingCount,
        openAtEnd: idleAfter.open,
        eventsDuringLoad: idleAfter.events - idleBefore.events,
        endedCleanly,
      },
      memory: {
        windowSeconds,
        rssStartMb: rssStart / MB,
        rssPeakMb: rssPeak,
        rssFirstWindowMb: rssFirst,
        rssLastWindowMb: rssLast,
        rssGrowth,
        vmHwmMb: vmHwm === null ? null : vmHwm / MB,
        settledBefore,
        settledAfter,
        heapGrowth,
        samples,
      },
      serverCpuPercent: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) / measuredMs) * 100,
    };
    return { ...result, table: renderLoad(result), targets: loadTargets(result) };
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await fake?.stop();
    rmSync(reportFile, { force: true });
  }
}

function renderLoad(result: Omit<LoadResult, 'table' | 'targets'>): string {
  const { options, runs, steps, errors, idle, memory } = result;
  const w = fmt(memory.windowSeconds, 0);
  const rows: [string, string][] = [
    [
      'load',
      `${options.concurrency} runs in flight + ${idle.subscriptions} idle runEvents subscriptions (${idle.waitingRuns} waiting runs) for ${options.durationSeconds} s after a ${options.warmUpSeconds} s warm-up; provider latency ${options.latencyMs} ms, K = ${options.k}`,
    ],
    ['runs completed / started (all verified)', `${runs.completed} / ${runs.total} (${runs.measured} started in the measured ${options.durationSeconds} s, ${runs.warmUp} before it)`],
    ['runs/s (measured phase)', fmt(runs.perSecond)],
    ['run time p50 / p95 / p99 (measured phase)', `${fmt(runs.p50Ms)} / ${fmt(runs.p95Ms)} / ${fmt(runs.p99Ms)} ms`],
    ['steps streamed / stored (all runs)', `${steps.streamed} / ${steps.stored} (${fmt(steps.perSecond)} steps/s in the measured phase)`],
    ['errors', `${errors.total} (runs ${errors.runs}, unexpected step lists ${errors.unexpectedSteps}, idle subscriptions ${errors.idle}, server error log lines ${errors.serverErrorLines}; warnings ${errors.serverWarnLines})`],
    ['lost steps', String(result.lostSteps)],
    ['duplicate steps', String(result.duplicateSteps)],
    ['out-of-order steps', String(result.outOfOrderSteps)],
    ['idle subscriptions open at the end', `${idle.openAtEnd} / ${idle.subscriptions} (events received during the load: ${idle.eventsDuringLoad}); ended cleanly after cancel: ${idle.endedCleanly}`],
    ['server RSS at the clock / peak / VmHWM', `${fmt(memory.rssStartMb)} / ${fmt(memory.rssPeakMb)} / ${fmt(memory.vmHwmMb)} MB`],
    [`server RSS median first ${w} s / last ${w} s`, `${fmt(memory.rssFirstWindowMb)} / ${fmt(memory.rssLastWindowMb)} MB (${(memory.rssGrowth * 100).toFixed(1)} %)`],
    ['settled heap before / after (full GC)', `${fmt(memory.settledBefore.heapUsed / MB)} / ${fmt(memory.settledAfter.heapUsed / MB)} MB (${(memory.heapGrowth * 100).toFixed(1)} %)`],
    [
      'settled RSS / heap total / external before → after',
      `${fmt(memory.settledBefore.rss / MB)} / ${fmt(memory.settledBefore.heapTotal / MB)} / ${fmt(memory.settledBefore.external / MB)} → ${fmt(memory.settledAfter.rss / MB)} / ${fmt(memory.settledAfter.heapTotal / MB)} / ${fmt(memory.settledAfter.external / MB)} MB`,
    ],
    ['server CPU (measured phase + drain)', result.serverCpuPercent === null ? '—' : `${fmt(result.serverCpuPercent)} % of one core`],
  ];
  // Two columns, values left-aligned: they are sentences, not numbers to compare down a column.
  const width = Math.max(...rows.map(([label]) => label.length));
  return [...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`), ...errors.examples.map((example) => `  ! ${example}`)].join('\n');
}

function loadTargets(result: Omit<LoadResult, 'table' | 'targets'>): TargetCheck[] {
  const { errors, memory, idle } = result;
  const w = fmt(memory.windowSeconds, 0);
  return [
    {
      target: 'no error (runs, idle subscriptions, server error logs)',
      figure: `${errors.total} errors over ${result.runs.total} runs and ${idle.subscriptions} idle subscriptions`,
      met: errors.total === 0,
    },
    {
      target: `every idle subscription open through the load and then sees its run end`,
      figure: `${idle.openAtEnd} / ${idle.subscriptions} open, ${idle.endedCleanly} ended cleanly`,
      met: idle.openAtEnd === idle.subscriptions && idle.endedCleanly === idle.subscriptions,
    },
    {
      target: 'no lost step: stored steps = streamed steps for every run, none duplicated, in order',
      figure: `${result.lostSteps} lost, ${result.duplicateSteps} duplicated, ${result.outOfOrderSteps} out of order (${result.steps.stored} stored steps)`,
      met: result.lostSteps === 0 && result.duplicateSteps === 0 && result.outOfOrderSteps === 0 && result.steps.stored > 0,
    },
    {
      target: `bounded memory: median RSS of the last ${w} s ≤ ${BOUND} × the first ${w} s`,
      figure: `${fmt(memory.rssLastWindowMb)} vs ${fmt(memory.rssFirstWindowMb)} MB (${(memory.rssGrowth * 100).toFixed(1)} %)`,
      met: memory.rssLastWindowMb <= BOUND * memory.rssFirstWindowMb,
    },
    {
      target: `bounded memory: settled heap after the load ≤ ${BOUND} × before it`,
      figure: `${fmt(memory.settledAfter.heapUsed / MB)} vs ${fmt(memory.settledBefore.heapUsed / MB)} MB (${(memory.heapGrowth * 100).toFixed(1)} %)`,
      met: memory.settledAfter.heapUsed <= BOUND * memory.settledBefore.heapUsed,
    },
  ];
}

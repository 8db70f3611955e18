/**
 * Workload 1: agent runs, K tool rounds then an answer, N runs at concurrency 1, 8, 64, against the
 * fake OpenAI server. Variants: (a) bare loop, (b) Vercel AI SDK, (c) Airlock `runAgent` over
 * graphql-ws with every step persisted at METADATA, on PostgreSQL and on PGlite. Repetitions are
 * interleaved (every variant once per repetition, rotated order) and figures are medians.
 *
 * A "step" is one provider call (K + 1 per run): the unit all three variants share. Airlock stores
 * 2 rows per provider call (REQUEST, LLM) and one per tool call on top.
 */
import type { BatchRequest, BatchResult } from '../bin/agent-driver.ts';
import { type AirlockUnderTest, backendPids, postgresAvailable, startAirlock, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer, type Driver, type ServerProcess } from '../lib/children.ts';
import { cpuMs, cpuMsByPid, peakRssBytes } from '../lib/proc.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, quantile, ratio, renderTable } from '../lib/stats.ts';

export type Variant = 'bare' | 'ai-sdk' | 'airlock-postgres' | 'airlock-pglite';
const VARIANTS: readonly Variant[] = ['bare', 'ai-sdk', 'airlock-postgres', 'airlock-pglite'];
const LABEL: Record<Variant, string> = {
  bare: '(a) bare loop',
  'ai-sdk': '(b) AI SDK generateText',
  'airlock-postgres': '(c) Airlock runAgent, PostgreSQL',
  'airlock-pglite': '(c) Airlock runAgent, PGlite',
};

export interface AgentRunsOptions {
  readonly runs: number;
  readonly k: number;
  readonly concurrencies: readonly number[];
  readonly repetitions: number;
  /** Runs of every variant before the clock starts (the same for all). */
  readonly warmUpRuns: number;
  /** Fixed latency of the fake server, ms (0 = none). */
  readonly latencyMs: number;
}

interface Sample {
  readonly wallMs: number;
  readonly runsPerSecond: number;
  readonly wallMsPerStep: number;
  readonly p95RunMs: number;
  /** CPU of the process that runs the agent loop (Airlock: the server; others: the driver). */
  readonly cpuMsPerStep: number | null;
  /** Airlock only: CPU of the graphql-ws client process. */
  readonly clientCpuMsPerStep: number | null;
  /** Airlock on PostgreSQL only: CPU of the database's backend processes. */
  readonly dbCpuMsPerStep: number | null;
}

export interface AgentRunsFigures {
  readonly variant: Variant;
  readonly label: string;
  readonly concurrency: number;
  readonly measured: boolean;
  readonly reason?: string;
  readonly median?: Omit<Sample, 'wallMs'>;
  readonly peakRssBytes?: number | null;
  readonly ratioToBare?: { wallMsPerStep: number | null; cpuMsPerStep: number | null };
  readonly samples?: Sample[];
}

export interface AgentRunsResult {
  readonly options: AgentRunsOptions;
  readonly stepDefinition: string;
  readonly figures: AgentRunsFigures[];
  readonly table: string;
}

interface Target {
  readonly variant: Variant;
  readonly driver: Driver;
  /** The process whose CPU is the runtime's (Airlock: the server; others: the driver). */
  readonly agentPid: number;
  readonly airlock?: AirlockUnderTest;
}

export async function runAgentRuns(options: AgentRunsOptions): Promise<AgentRunsResult> {
  const skipped = new Map<Variant, string>();
  const targets: Target[] = [];
  let fake: ServerProcess | null = null;
  const stops: (() => Promise<void>)[] = [];
  try {
    progress('[agent runs] starting the fake OpenAI server');
    fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: String(options.latencyMs) }, /listening (\d+)/);
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;

    for (const variant of VARIANTS) {
      try {
        progress(`[agent runs] starting ${LABEL[variant]}`);
        const driver = await startDriver('bench/bin/agent-driver.ts');
        stops.push(() => driver.stop());
        if (variant === 'bare' || variant === 'ai-sdk') {
          targets.push({ variant, driver, agentPid: driver.pid });
          continue;
        }
        const kind: DbKind = variant === 'airlock-postgres' ? 'postgres' : 'pglite';
        if (kind === 'postgres' && !(await postgresAvailable())) throw new Error('no PostgreSQL server answers at BENCH_DATABASE_URL');
        const airlock = await startAirlock(kind, { fakeBaseUrl, k: options.k });
        stops.push(() => airlock.stop());
        targets.push({ variant, driver, agentPid: airlock.server.pid, airlock });
      } catch (error) {
        skipped.set(variant, error instanceof Error ? error.message.split('\n')[0]! : String(error));
      }
    }

    const request = (target: Target, runs: number, concurrency: number): BatchRequest & { type: string } => ({
      type: 'batch',
      variant: target.variant.startsWith('airlock') ? 'airlock' : (target.variant as 'bare' | 'ai-sdk'),
      runs,
      concurrency,
      k: options.k,
      fakeBaseUrl,
      ...(target.airlock ? { airlock: { wsUrl: target.airlock.wsUrl, token: target.airlock.userToken, configurationId: target.airlock.configurationId } } : {}),
    });

    // Warm-up: JIT, connection pools, prepared caches. A variant that fails here is not measured.
    // A server's optimising compiler needs a few hundred runs to settle (measured: with 40 runs of
    // warm-up, V8's background threads still spent 1.7 ms per step compiling; with 600, 0.5 ms).
    for (const target of [...targets]) {
      progress(`[agent runs] warm-up ${LABEL[target.variant]} (${options.warmUpRuns} runs)`);
      try {
        await target.driver.request<BatchResult>(request(target, options.warmUpRuns, Math.min(8, Math.max(...options.concurrencies))));
      } catch (error) {
        skipped.set(target.variant, `failed in warm-up: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        targets.splice(targets.indexOf(target), 1);
      }
    }

    const samples = new Map<string, Sample[]>();
    const total = options.repetitions * options.concurrencies.length * targets.length;
    let done = 0;
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      for (const concurrency of options.concurrencies) {
        // Rotated order, so no variant always runs right after the same other one.
        const order = targets.map((_, index) => targets[(index + repetition) % targets.length]!);
        for (const target of order) {
          done += 1;
          progress(`[agent runs] rep ${repetition + 1}/${options.repetitions} · c=${concurrency} · ${LABEL[target.variant]} · ${done}/${total} batches`);
          const pids = await backendPids(target.airlock?.databaseName ?? null);
          const before = { agent: cpuMs(target.agentPid), client: cpuMs(target.driver.pid), db: cpuMsByPid(pids) };
          const result = await target.driver.request<BatchResult>(request(target, options.runs, concurrency));
          // Backends born during the batch (the pool grows, or reconnects after its idle timeout) count in full.
          const after = { agent: cpuMs(target.agentPid), client: cpuMs(target.driver.pid), db: cpuMsByPid(await backendPids(target.airlock?.databaseName ?? null)) };
          const steps = result.steps;
          const isAirlock = target.airlock !== undefined;
          const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : (b - a) / steps);
          const dbCpu = target.airlock?.kind === 'postgres' ? [...after.db].reduce((sum, [pid, value]) => sum + value - (before.db.get(pid) ?? 0), 0) / steps : null;
          const sample: Sample = {
            wallMs: result.wallMs,
            runsPerSecond: (options.runs * 1000) / result.wallMs,
            wallMsPerStep: result.wallMs / steps,
            p95RunMs: quantile(result.runMs, 0.95),
            cpuMsPerStep: delta(before.agent, after.agent),
            clientCpuMsPerStep: isAirlock ? delta(before.client, after.client) : null,
            dbCpuMsPerStep: dbCpu,
          };
          const key = `${target.variant}@${concurrency}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
      }
    }
    progressDone();

    const figures: AgentRunsFigures[] = [];
    for (const concurrency of options.concurrencies) {
      const bare = samples.get(`bare@${concurrency}`);
      const medianOf = (list: Sample[], pick: (sample: Sample) => number | null) => {
        const values = list.map(pick).filter((value): value is number => value !== null);
        return values.length === 0 ? null : median(values);
      };
      const bareWall = bare ? medianOf(bare, (sample) => sample.wallMsPerStep) : null;
      const bareCpu = bare ? medianOf(bare, (sample) => sample.cpuMsPerStep) : null;
      for (const variant of VARIANTS) {
        const list = samples.get(`${variant}@${concurrency}`);
        const target = targets.find((candidate) => candidate.variant === variant);
        if (!list || !target) {
          figures.push({ variant, label: LABEL[variant], concurrency, measured: false, reason: skipped.get(variant) ?? 'not measured' });
          continue;
        }
        const wallMsPerStep = medianOf(list, (sample) => sample.wallMsPerStep)!;
        const cpuMsPerStep = medianOf(list, (sample) => sample.cpuMsPerStep);
        figures.push({
          variant,
          label: LABEL[variant],
          concurrency,
          measured: true,
          median: {
            runsPerSecond: medianOf(list, (sample) => sample.runsPerSecond)!,
            wallMsPerStep,
            p95RunMs: medianOf(list, (sample) => sample.p95RunMs)!,
            cpuMsPerStep,
            clientCpuMsPerStep: medianOf(list, (sample) => sample.clientCpuMsPerStep),
            dbCpuMsPerStep: medianOf(list, (sample) => sample.dbCpuMsPerStep),
          },
          peakRssBytes: peakRssBytes(target.agentPid),
          ratioToBare: { wallMsPerStep: ratio(wallMsPerStep, bareWall), cpuMsPerStep: ratio(cpuMsPerStep, bareCpu) },
          samples: list,
        });
      }
    }
    return {
      options,
      stepDefinition: 'one provider call (K + 1 per run); wall ms/step = batch wall time / provider calls in the batch',
      figures,
      table: renderAgentRuns(figures),
    };
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await fake?.stop();
  }
}

function renderAgentRuns(figures: readonly AgentRunsFigures[]): string {
  const header = ['variant', 'c', 'wall ms/step', '× bare', 'CPU ms/step', '× bare', 'client CPU', 'db CPU', 'runs/s', 'p95 run ms', 'peak RSS MB'];
  const rows = figures.map((figure) =>
    figure.measured && figure.median
      ? [
          figure.label,
          String(figure.concurrency),
          fmt(figure.median.wallMsPerStep),
          fmtRatio(figure.ratioToBare?.wallMsPerStep ?? null),
          fmt(figure.median.cpuMsPerStep),
          fmtRatio(figure.ratioToBare?.cpuMsPerStep ?? null),
          fmt(figure.median.clientCpuMsPerStep),
          fmt(figure.median.dbCpuMsPerStep),
          fmt(figure.median.runsPerSecond),
          fmt(figure.median.p95RunMs),
          fmt(figure.peakRssBytes ? figure.peakRssBytes / 1024 / 1024 : null),
        ]
      : [figure.label, String(figure.concurrency), 'not measured', '', '', '', '', '', '', '', ''],
  );
  const reasons = [...new Map(figures.filter((figure) => !figure.measured).map((figure) => [figure.label, figure.reason ?? ''])).entries()];
  return [renderTable(header, rows), ...reasons.map(([label, reason]) => `  ${label}: not measured (${reason})`)].join('\n');
}

/**
 * Durable runs, 2. checkpoint cost: workload 1's agent runs (`lib/agent-variants.ts`, the code path
 * of workload 8) on servers that differ only in `AIRLOCK_RESUME_RUNS` (true: a sealed checkpoint at
 * every step boundary; false: none), PGlite and PostgreSQL: server CPU per stored step and stored
 * steps per second, true ÷ false. Each repetition runs the two servers of a database back to back
 * (the order reversed every repetition), and the figure is the median of those paired ratios: on a
 * shared machine the CPU per step drifts by 2 × within minutes, far more than the effect.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { measureAgentVariants, type AgentBatchSample } from '../../lib/agent-variants.ts';
import { postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../../lib/airlock.ts';
import { startDriver, startServer } from '../../lib/children.ts';
import { progress, progressDone } from '../../lib/progress.ts';
import { median, ratio } from '../../lib/stats.ts';

export interface CostOptions {
  readonly runs: number;
  readonly k: number;
  readonly concurrency: number;
  readonly repetitions: number;
  readonly warmUpRuns: number;
}

type Checkpoints = 'true' | 'false';
type CostVariant = `${DbKind} ${Checkpoints}`;

interface PairedRatio {
  readonly cpu: number;
  readonly throughput: number;
  readonly cpuRange: readonly [number, number];
  readonly throughputRange: readonly [number, number];
  readonly cpuOfMedians: number | null;
  readonly throughputOfMedians: number | null;
}

interface CostFigures {
  readonly serverCpuMsPerStep: number;
  readonly stepsPerSecond: number;
  readonly databaseCpuMsPerStep: number | null;
}

export interface CostResult {
  readonly options: CostOptions;
  /** Stored steps per run: REQUEST and LLM per provider call, TOOL per tool call. */
  readonly stepsPerRun: number;
  readonly kinds: readonly DbKind[];
  readonly samples: readonly AgentBatchSample<CostVariant>[];
  readonly median: Partial<Record<CostVariant, CostFigures>>;
  /** true ÷ false, per database: the median of the per-repetition ratios (the figure), their range, and the ratio of the medians. */
  readonly ratio: Partial<Record<DbKind, PairedRatio>>;
  /** PostgreSQL: rows updated in the database per run (pg_stat_database), so that a server storing no checkpoint cannot pass as cheap. */
  readonly rowsUpdatedPerRun: Partial<Record<Checkpoints, number>>;
}

export async function measureCheckpointCost(options: CostOptions): Promise<CostResult> {
  const step = (text: string) => progress(`[durable: checkpoint cost] ${text}`);
  const stops: (() => Promise<void>)[] = [];
  const stepsPerRun = 3 * options.k + 2;
  try {
    const kinds: DbKind[] = (await postgresAvailable()) ? ['pglite', 'postgres'] : ['pglite'];
    step(`starting the fake OpenAI server and ${kinds.length * 2} Airlock servers (AIRLOCK_RESUME_RUNS true / false on ${kinds.join(', ')})`);
    const fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: '0' }, /listening (\d+)/);
    stops.push(() => fake.stop());
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
    const variants: { name: CostVariant; airlock: AirlockUnderTest }[] = [];
    for (const kind of kinds) {
      for (const checkpoints of ['false', 'true'] as const) {
        const airlock = await startAirlock(kind, { fakeBaseUrl, k: options.k, env: { AIRLOCK_RESUME_RUNS: checkpoints } });
        stops.push(() => airlock.stop());
        variants.push({ name: `${kind} ${checkpoints}`, airlock });
      }
    }
    const driver = await startDriver('bench/bin/agent-driver.ts');
    stops.push(() => driver.stop());
    const updated = async () => {
      const names = variants.filter((variant) => variant.airlock.databaseName).map((variant) => variant.airlock.databaseName!);
      if (names.length === 0) return new Map<string, number>();
      const client = new pg.Client({ connectionString: variants.find((variant) => variant.airlock.databaseName)!.airlock.env.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query<{ datname: string; n: string }>(`select datname, tup_updated as n from pg_stat_database where datname = any($1)`, [names]);
        return new Map(rows.map((row) => [row.datname, Number(row.n)]));
      } finally {
        await client.end();
      }
    };
    const updatedBefore = await updated();

    const samples = await measureAgentVariants<CostVariant>({
      variants,
      driver,
      fakeBaseUrl,
      k: options.k,
      runs: options.runs,
      concurrency: options.concurrency,
      repetitions: options.repetitions,
      warmUpRuns: options.warmUpRuns,
      label: 'durable: checkpoint cost',
      databaseCpu: true,
      // The two servers of a database back to back, which first alternating; the databases too.
      order: (repetition) => {
        const forward = kinds.flatMap((kind) => [`${kind} false`, `${kind} true`] as const);
        return repetition % 2 === 0 ? forward : [...forward].reverse();
      },
    });

    // A backend reports its counters at a commit at most once a second, else after 10 s idle (PostgreSQL 15).
    let rowsUpdatedPerRun: CostResult['rowsUpdatedPerRun'] = {};
    if (kinds.includes('postgres')) {
      step('waiting 11 s for PostgreSQL to report its row counters');
      await sleep(11_000);
      const updatedAfter = await updated();
      const runsPerServer = options.warmUpRuns + options.runs * options.repetitions;
      const of = (checkpoints: Checkpoints) => {
        const name = variants.find((variant) => variant.name === `postgres ${checkpoints}`)!.airlock.databaseName!;
        return ((updatedAfter.get(name) ?? Number.NaN) - (updatedBefore.get(name) ?? Number.NaN)) / runsPerServer;
      };
      rowsUpdatedPerRun = { false: of('false'), true: of('true') };
    }
    return summariseCost(options, stepsPerRun, kinds, samples, rowsUpdatedPerRun);
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

function summariseCost(
  options: CostOptions,
  stepsPerRun: number,
  kinds: readonly DbKind[],
  samples: readonly AgentBatchSample<CostVariant>[],
  rowsUpdatedPerRun: CostResult['rowsUpdatedPerRun'],
): CostResult {
  const perStep = (sample: AgentBatchSample<CostVariant>) => {
    const steps = sample.runs * stepsPerRun;
    return {
      serverCpuMsPerStep: sample.serverCpuMs === null ? Number.NaN : sample.serverCpuMs / steps,
      stepsPerSecond: (steps * 1000) / sample.wallMs,
      databaseCpuMsPerStep: sample.databaseCpuMs === null ? null : sample.databaseCpuMs / steps,
    };
  };
  const of = (variant: CostVariant) => samples.filter((sample) => sample.variant === variant).map(perStep);
  const medianOf = (variant: CostVariant): CostFigures => {
    const list = of(variant);
    const database = list.map((figures) => figures.databaseCpuMsPerStep).filter((value): value is number => value !== null);
    return {
      serverCpuMsPerStep: median(list.map((figures) => figures.serverCpuMsPerStep)),
      stepsPerSecond: median(list.map((figures) => figures.stepsPerSecond)),
      databaseCpuMsPerStep: database.length === 0 ? null : median(database),
    };
  };
  const medians: CostResult['median'] = {};
  const ratios: CostResult['ratio'] = {};
  for (const kind of kinds) {
    const [off, on] = [medianOf(`${kind} false`), medianOf(`${kind} true`)];
    medians[`${kind} false`] = off;
    medians[`${kind} true`] = on;
    // Per repetition: the two batches of the same repetition, back to back.
    const paired = Array.from({ length: options.repetitions }, (_, repetition) => {
      const at = (checkpoints: Checkpoints) => perStep(samples.find((sample) => sample.variant === `${kind} ${checkpoints}` && sample.repetition === repetition)!);
      const [false_, true_] = [at('false'), at('true')];
      return { cpu: true_.serverCpuMsPerStep / false_.serverCpuMsPerStep, throughput: true_.stepsPerSecond / false_.stepsPerSecond };
    });
    const range = (values: number[]): [number, number] => [Math.min(...values), Math.max(...values)];
    ratios[kind] = {
      cpu: median(paired.map((pair) => pair.cpu)),
      throughput: median(paired.map((pair) => pair.throughput)),
      cpuRange: range(paired.map((pair) => pair.cpu)),
      throughputRange: range(paired.map((pair) => pair.throughput)),
      cpuOfMedians: ratio(on.serverCpuMsPerStep, off.serverCpuMsPerStep),
      throughputOfMedians: ratio(on.stepsPerSecond, off.stepsPerSecond),
    };
  }
  return { options, stepsPerRun, kinds, samples, median: medians, ratio: ratios, rowsUpdatedPerRun };
}

/**
 * Durable runs (issue 27), two measures:
 *
 * 1. Resume latency (PostgreSQL): two Airlock processes A and B on one private database, a short
 *    lease (`AIRLOCK_RUN_LEASE_MS`). N runs start on A (`startRun`, K tool rounds, every provider
 *    call answered after a fixed latency by the fake server); once every run has stored a few
 *    steps and none has ended, A is killed with SIGKILL. Per run: from its lease's expiry — the
 *    `lease_expires_at` A's last renewal left, read once A is dead — to the first step B stored
 *    (the first `run_steps` row with epoch > 1), both by the database's clock.
 * 2. Checkpoint cost: workload 1's agent runs (`lib/agent-variants.ts`, the code path of workload 8)
 *    on servers that differ only in `AIRLOCK_RESUME_RUNS` (true: a sealed checkpoint at every step
 *    boundary; false: none), PGlite and PostgreSQL: server CPU per stored step and stored steps per
 *    second, true ÷ false. Each repetition runs the two servers of a database back to back (the
 *    order reversed every repetition), and the figure is the median of those paired ratios: on a
 *    shared machine the CPU per step drifts by 2 × within minutes, far more than the effect. So the
 *    sealing alone is timed too, in this process: the resume point every step of such a run carries.
 *
 * Targets (issue 27): resume ≤ lease + 2 s; checkpointing costs ≤ 10 % server CPU per step.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import pg from 'pg';
import { createSecretBox } from '../../src/db/secret-box.ts';
import type { ChatMessage } from '../../src/runtime/llm.ts';
import type { ResumePoint } from '../../src/runtime/resume-point.ts';
import { sealCheckpoint, type RunCheckpoint } from '../../src/services/run-checkpoints.ts';
import { measureAgentVariants, type AgentBatchSample } from '../lib/agent-variants.ts';
import { BENCH_PROMPT, BENCH_SYSTEM_PROMPT, BENCH_TOOL_NAME, benchLookup } from '../lib/agent-tool.ts';
import { joinAirlock, postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, quantile, ratio, renderTable } from '../lib/stats.ts';
import type { TargetCheck } from '../lib/targets.ts';
import { inPool } from '../lib/ws-client.ts';

export interface DurableOptions {
  readonly resume: {
    /** Runs in flight on A when it is killed. */
    readonly runs: number;
    /** Tool rounds per run (K + 1 provider calls, 3K + 2 stored steps). */
    readonly k: number;
    /** Latency of every provider call, ms: keeps the runs in flight. */
    readonly latencyMs: number;
    readonly leaseMs: number;
  };
  readonly cost: {
    readonly runs: number;
    readonly k: number;
    readonly concurrency: number;
    readonly repetitions: number;
    readonly warmUpRuns: number;
  };
}

/** Milliseconds since the epoch, by the database's clock (microsecond precision kept as a fraction). */
const EPOCH_MS = (expression: string) => `extract(epoch from ${expression}) * 1000`;

// ── 1. resume latency ───────────────────────────────────────────────────────

interface ResumedRun {
  readonly id: string;
  readonly status: string;
  readonly resumeCount: number;
  /** Lease expiry A's last renewal left → B's first stored step. */
  readonly fromExpiryMs: number | null;
  /** The kill (the database's clock just before it) → B's first stored step. */
  readonly fromKillMs: number | null;
  /** How much of the lease was left at the kill. */
  readonly leaseLeftAtKillMs: number;
  readonly stepsBeforeKill: number;
  readonly steps: number;
  /** Sequences stored twice or missing between the first and the last. */
  readonly sequenceFaults: number;
}

export interface ResumeResult {
  readonly options: DurableOptions['resume'];
  readonly heartbeatMs: number;
  readonly runs: readonly ResumedRun[];
  readonly fromExpiry: Quantiles;
  readonly fromKill: Quantiles;
  readonly leaseLeftAtKill: Quantiles;
  /** Runs that ended COMPLETED, were taken over exactly once, with no sequence fault. */
  readonly clean: number;
  /** Stored steps beyond 3K + 2 per run: the provider calls in flight at the kill, made again by B (their REQUEST step twice). */
  readonly stepsMadeAgain: number;
}

interface Quantiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const quantiles = (values: readonly number[]): Quantiles => ({ p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: Math.max(...values) });

async function poll<T>(what: string, deadlineMs: number, read: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startRuns(airlock: AirlockUnderTest, count: number): Promise<void> {
  await inPool(count, 8, async () => {
    const data = await airlock.gql<{ startRun: { __typename: string; message?: string } }>(
      `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Error { message } } }`,
      { input: { configurationId: airlock.configurationId, prompt: BENCH_PROMPT } },
      airlock.userToken,
    );
    if (data.startRun.__typename !== 'Run') throw new Error(`startRun refused: ${JSON.stringify(data.startRun)}`);
  });
}

export async function measureResume(options: DurableOptions['resume']): Promise<ResumeResult> {
  const step = (text: string) => progress(`[durable: resume] ${text}`);
  const stops: (() => Promise<void>)[] = [];
  // The heartbeat the run host derives from the lease (leaseTimings in src/services/run-host/lease-keeper.ts): a third of it, at most 10 s.
  const heartbeatMs = Math.min(10_000, Math.max(Math.floor(options.leaseMs / 3), 10));
  try {
    step('starting the fake OpenAI server and two Airlock servers A and B on one PostgreSQL database');
    const fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: String(options.latencyMs) }, /listening (\d+)/);
    stops.push(() => fake.stop());
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
    // No Redis: the figures are read from the database, and nothing watches B's live events.
    const a = await startAirlock('postgres', { fakeBaseUrl, k: options.k, env: { AIRLOCK_RUN_LEASE_MS: String(options.leaseMs), AIRLOCK_RESUME_RUNS: 'true' } });
    stops.push(() => a.stop()); // after A's death: drops the database
    const b = await joinAirlock(a);
    stops.push(() => b.stop());
    const db = new pg.Client({ connectionString: a.env.DATABASE_URL });
    await db.connect();
    stops.push(() => db.end());

    const runIds = async (): Promise<string[]> => (await db.query<{ id: string }>(`select id from runs where kind = 'AGENT'`)).rows.map((row) => row.id);
    const settled = (ids: readonly string[]) =>
      db.query<{ n: string }>(`select count(*) as n from runs where id = any($1) and status <> 'RUNNING'`, [ids]).then((result) => Number(result.rows[0]!.n) === ids.length);

    // Warm-up: the same runs to their end on each instance (JIT, pools), so that B's takeover is not its first run.
    step(`warm-up: ${options.runs} runs on each instance`);
    await Promise.all([startRuns(a, options.runs), startRuns(b, options.runs)]);
    const warmUp = await runIds();
    await poll('the warm-up runs ended', 120_000, async () => ((await settled(warmUp)) ? true : null));

    step(`starting ${options.runs} runs on A`);
    await startRuns(a, options.runs);
    const ids = (await runIds()).filter((id) => !warmUp.includes(id));
    if (ids.length !== options.runs) throw new Error(`${ids.length} runs found instead of ${options.runs}`);
    // Mid-flight: every run past its first tool round (REQUEST, LLM, TOOL, REQUEST stored), none ended.
    const minimumSteps = 4;
    step(`waiting until every run has stored ${minimumSteps} steps`);
    await poll(`every run RUNNING with ${minimumSteps} stored steps`, 60_000, async () => {
      const { rows } = await db.query<{ running: string; ready: string }>(
        `select count(*) filter (where status = 'RUNNING') as running,
                count(*) filter (where status = 'RUNNING' and (select count(*) from run_steps s where s.run_id = r.id) >= $2) as ready
           from runs r where id = any($1)`,
        [ids, minimumSteps],
      );
      const running = Number(rows[0]!.running);
      if (running < ids.length) throw new Error(`${ids.length - running} runs ended before A was killed: raise K or the latency`);
      return Number(rows[0]!.ready) === ids.length ? true : null;
    });
    const killedAt = Number((await db.query<{ at: string }>(`select ${EPOCH_MS('clock_timestamp()')} as at`)).rows[0]!.at);
    const exited = once(a.server.child, 'exit');
    process.kill(a.server.pid, 'SIGKILL');
    await exited;
    step(`A killed (SIGKILL); reading the leases it left`);
    // A statement A sent just before its death may still commit: read once it settled, well before
    // any lease lapses (B raises the epoch when it claims, so epoch 1 says the row is A's).
    await new Promise((resolve) => setTimeout(resolve, 250));
    const leases = await db.query<{ id: string; expiry: string; epoch: number; steps: string }>(
      `select id, ${EPOCH_MS('lease_expires_at')} as expiry, lease_epoch as epoch, (select count(*) from run_steps s where s.run_id = r.id) as steps
         from runs r where id = any($1)`,
      [ids],
    );
    if (leases.rows.some((row) => row.epoch !== 1 || row.expiry === null)) throw new Error('a run was claimed before its lease was read: the lease is too short for this machine');
    step(`waiting for B to take the runs over and finish them (lease ${options.leaseMs} ms)`);
    await poll('B finished every run', options.leaseMs + 120_000, async () => ((await settled(ids)) ? true : null));

    const { rows } = await db.query<{ id: string; status: string; resume_count: number; first_resumed: string | null; steps: string; distinct_sequences: string; span: string }>(
      `select r.id, r.status, r.resume_count,
              (select ${EPOCH_MS('min(s.created_at)')} from run_steps s where s.run_id = r.id and s.epoch > 1) as first_resumed,
              (select count(*) from run_steps s where s.run_id = r.id) as steps,
              (select count(distinct s.sequence) from run_steps s where s.run_id = r.id) as distinct_sequences,
              (select max(s.sequence) - min(s.sequence) + 1 from run_steps s where s.run_id = r.id) as span
         from runs r where r.id = any($1)`,
      [ids],
    );
    const before = new Map(leases.rows.map((row) => [row.id, { expiry: Number(row.expiry), steps: Number(row.steps) }]));
    const runs: ResumedRun[] = rows.map((row) => {
      const lease = before.get(row.id)!;
      const first = row.first_resumed === null ? null : Number(row.first_resumed);
      const steps = Number(row.steps);
      return {
        id: row.id,
        status: row.status,
        resumeCount: row.resume_count,
        fromExpiryMs: first === null ? null : first - lease.expiry,
        fromKillMs: first === null ? null : first - killedAt,
        leaseLeftAtKillMs: lease.expiry - killedAt,
        stepsBeforeKill: lease.steps,
        steps,
        sequenceFaults: steps - Number(row.distinct_sequences) + Math.abs(Number(row.span) - Number(row.distinct_sequences)),
      };
    });
    const resumed = runs.filter((run) => run.fromExpiryMs !== null);
    if (resumed.length === 0) throw new Error('B stored no step of any run');
    return {
      options,
      heartbeatMs,
      runs,
      fromExpiry: quantiles(resumed.map((run) => run.fromExpiryMs!)),
      fromKill: quantiles(resumed.map((run) => run.fromKillMs!)),
      leaseLeftAtKill: quantiles(runs.map((run) => run.leaseLeftAtKillMs)),
      clean: runs.filter((run) => run.status === 'COMPLETED' && run.resumeCount === 1 && run.sequenceFaults === 0).length,
      stepsMadeAgain: runs.reduce((sum, run) => sum + run.steps - (3 * options.k + 2), 0),
    };
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

// ── 2. checkpoint cost ──────────────────────────────────────────────────────

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
  readonly options: DurableOptions['cost'];
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

export async function measureCheckpointCost(options: DurableOptions['cost']): Promise<CostResult> {
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
      await new Promise((resolve) => setTimeout(resolve, 11_000));
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
  options: DurableOptions['cost'],
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

// ── 3. the sealing alone ────────────────────────────────────────────────────

export interface SealingResult {
  /** Seals per run: the start, then the resume point of every stored step (at most one each). */
  readonly sealsPerRun: number;
  readonly microsecondsPerSeal: number;
  /** Per stored step (seals per run ÷ stored steps per run). */
  readonly microsecondsPerStep: number;
  readonly sealedBytesLastStep: number;
}

/**
 * Times `sealCheckpoint` (JSON, AES-256-GCM, base64: src/services/run-checkpoints.ts) on the
 * checkpoints one run of K tool rounds stores, in the transcript shape of the runs above: the
 * deterministic part of what a checkpoint costs the server (the statement carrying it aside).
 */
export function measureSealing(k: number, runs: number): SealingResult {
  const secrets = createSecretBox(randomBytes(32));
  const settings = { systemPrompt: BENCH_SYSTEM_PROMPT, temperature: null, maxTokens: null, maxIterations: Math.max(5, k + 1), quarantineToolOutput: false };
  const checkpoints: RunCheckpoint[] = [{ start: { prompt: BENCH_PROMPT } }];
  const messages: ChatMessage[] = [
    { role: 'system', content: BENCH_SYSTEM_PROMPT },
    { role: 'user', content: BENCH_PROMPT },
  ];
  let usage = { promptTokens: 0, completionTokens: 0, cost: 0 };
  for (let round = 1; round <= k + 1; round++) {
    const state = () => ({ messages: [...messages], iterations: round - 1, usage, lastContent: null });
    const points: ResumePoint[] = [{ at: 'call', round, state: state() }];
    usage = { promptTokens: usage.promptTokens + 20 * messages.length, completionTokens: usage.completionTokens + 10, cost: usage.cost + 0.0001 };
    const call = { id: `call_${round}`, name: BENCH_TOOL_NAME, arguments: { n: round } };
    const answer = round <= k ? { content: '', toolCalls: [call] } : { content: `Final answer after ${k} tool rounds.`, toolCalls: [] };
    points.push({ at: 'answered', round, state: state(), answer });
    if (round <= k) {
      messages.push({ role: 'assistant', content: '', toolCalls: [call] });
      const result = { callId: call.id, content: benchLookup(round), isError: false };
      points.push({ at: 'tools', round, state: state(), calls: [call], mode: 'run', done: [result], started: [] });
      messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: result.content, isError: false });
    }
    checkpoints.push(...points.map((point) => ({ point, settings, allowList: [BENCH_TOOL_NAME] })));
  }
  const sealRun = () => {
    const runId = randomUUID();
    let last = '';
    for (const checkpoint of checkpoints) last = sealCheckpoint(secrets, runId, checkpoint);
    return last;
  };
  for (let run = 0; run < Math.ceil(runs / 4); run++) sealRun(); // warm-up
  let last = '';
  const started = performance.now();
  for (let run = 0; run < runs; run++) last = sealRun();
  const microsecondsPerSeal = ((performance.now() - started) * 1000) / (runs * checkpoints.length);
  return {
    sealsPerRun: checkpoints.length,
    microsecondsPerSeal,
    microsecondsPerStep: (microsecondsPerSeal * checkpoints.length) / (3 * k + 2),
    sealedBytesLastStep: Buffer.byteLength(last),
  };
}

// ── the workload ────────────────────────────────────────────────────────────

export interface DurableResult {
  readonly resume: ResumeResult | { readonly notMeasured: string };
  readonly cost: CostResult;
  readonly sealing: SealingResult;
  readonly table: string;
}

export async function runDurable(options: DurableOptions): Promise<DurableResult> {
  const resume = (await postgresAvailable()) ? await measureResume(options.resume) : { notMeasured: 'no PostgreSQL server answers at BENCH_DATABASE_URL' };
  const cost = await measureCheckpointCost(options.cost);
  const sealing = measureSealing(options.cost.k, 2_000);
  return { resume, cost, sealing, table: renderDurable(resume, cost, sealing) };
}

const KIND_LABEL: Record<DbKind, string> = { postgres: 'PostgreSQL', pglite: 'PGlite' };
const range = ([low, high]: readonly [number, number]) => `${low.toFixed(2)}–${high.toFixed(2)}`;

function renderDurable(resume: DurableResult['resume'], cost: CostResult, sealing: SealingResult): string {
  const lines: string[] = [];
  if ('notMeasured' in resume) lines.push(`Resume latency: not measured (${resume.notMeasured})`);
  else {
    const { options } = resume;
    lines.push(
      `Resume latency (PostgreSQL): ${options.runs} runs on A (K = ${options.k}, ${options.latencyMs} ms per provider call), A killed with SIGKILL mid-flight, ` +
        `B continues them; AIRLOCK_RUN_LEASE_MS = ${options.leaseMs} (heartbeat ${resume.heartbeatMs} ms; an instance looks for lapsed leases every second)`,
      renderTable(
        ['ms (database clock)', 'p50', 'p99', 'max'],
        [
          ['lease expiry (A\'s last renewal) → first step stored by B', fmt(resume.fromExpiry.p50), fmt(resume.fromExpiry.p99), fmt(resume.fromExpiry.max)],
          ['SIGKILL → first step stored by B', fmt(resume.fromKill.p50), fmt(resume.fromKill.p99), fmt(resume.fromKill.max)],
          ['lease left at the kill', fmt(resume.leaseLeftAtKill.p50), fmt(resume.leaseLeftAtKill.p99), fmt(resume.leaseLeftAtKill.max)],
        ],
      ),
      `  ${resume.clean}/${resume.runs.length} runs COMPLETED, taken over once, no sequence stored twice or missing; ` +
        `${resume.stepsMadeAgain} steps stored beyond ${3 * options.k + 2} per run (the calls in flight at the kill, made again)`,
      '',
    );
  }
  const { options } = cost;
  lines.push(
    `Checkpoint cost: ${options.runs} runs × ${cost.stepsPerRun} stored steps (K = ${options.k}) at c = ${options.concurrency}, runAgent over graphql-ws, METADATA, ` +
      `${options.repetitions} repetitions after ${options.warmUpRuns} warm-up runs, medians; a step is one stored row; ` +
      `× false: median of the per-repetition ratios (true and false back to back), their range in brackets`,
  );
  const rows: string[][] = [];
  for (const kind of cost.kinds) {
    for (const checkpoints of ['false', 'true'] as const) {
      const figures = cost.median[`${kind} ${checkpoints}`]!;
      const ratios = cost.ratio[kind]!;
      const on = checkpoints === 'true';
      const updated = kind === 'postgres' ? cost.rowsUpdatedPerRun[checkpoints] : undefined;
      rows.push([
        `${KIND_LABEL[kind]}, AIRLOCK_RESUME_RUNS=${checkpoints}`,
        fmt(figures.serverCpuMsPerStep),
        on ? `${fmtRatio(ratios.cpu)} (${range(ratios.cpuRange)})` : '1.00×',
        fmt(figures.stepsPerSecond),
        on ? `${fmtRatio(ratios.throughput)} (${range(ratios.throughputRange)})` : '1.00×',
        fmt(figures.databaseCpuMsPerStep),
        updated === undefined ? '—' : fmt(updated),
      ]);
    }
  }
  lines.push(renderTable(['server', 'server CPU ms/step', '× false', 'steps stored/s', '× false', 'db CPU ms/step', 'rows updated/run'], rows));
  const shares = cost.kinds.map((kind) => `${(sealing.microsecondsPerStep / (cost.median[`${kind} false`]!.serverCpuMsPerStep * 10)).toFixed(1)} % of ${KIND_LABEL[kind]}'s`);
  lines.push(
    `  sealing alone (this process): ${fmt(sealing.microsecondsPerSeal)} µs per seal, ${sealing.sealsPerRun} seals per run = ${fmt(sealing.microsecondsPerStep)} µs per stored step ` +
      `(${shares.join(', ')} CPU per step with false); the last checkpoint of a run is ${sealing.sealedBytesLastStep} bytes sealed`,
  );
  return lines.join('\n');
}

export function durableTargets(result: DurableResult): TargetCheck[] {
  const checks: TargetCheck[] = [];
  if ('notMeasured' in result.resume) checks.push({ target: 'resume ≤ lease + 2 s', figure: 'not measured', met: null });
  else {
    const { resume } = result;
    checks.push({
      target: `resume ≤ lease + 2 s: every run's first step on B ≤ 2 s after its lease expired (lease ${resume.options.leaseMs} ms)`,
      figure: `p50 ${fmt(resume.fromExpiry.p50)} / p99 ${fmt(resume.fromExpiry.p99)} / max ${fmt(resume.fromExpiry.max)} ms after expiry; ${resume.clean}/${resume.runs.length} runs clean`,
      met: resume.fromExpiry.max <= 2_000 && resume.clean === resume.runs.length,
    });
  }
  for (const kind of result.cost.kinds) {
    const ratios = result.cost.ratio[kind]!;
    checks.push({
      target: `${KIND_LABEL[kind]}: checkpointing costs ≤ 10 % server CPU per step (AIRLOCK_RESUME_RUNS true ÷ false)`,
      figure:
        `${fmtRatio(ratios.cpu)} (median of ${result.cost.options.repetitions} paired repetitions, ${range(ratios.cpuRange)}; ratio of the medians ${fmtRatio(ratios.cpuOfMedians)}); ` +
        `steps stored/s ${fmtRatio(ratios.throughput)} (${range(ratios.throughputRange)})`,
      met: ratios.cpu <= 1.1,
    });
  }
  const updated = result.cost.rowsUpdatedPerRun;
  if (updated.true !== undefined && updated.false !== undefined) {
    checks.push({
      target: 'PostgreSQL: checkpoints were stored (more rows updated per run with true than with false)',
      figure: `${fmt(updated.true)} vs ${fmt(updated.false)} rows updated per run`,
      met: updated.true > updated.false,
    });
  }
  return checks;
}

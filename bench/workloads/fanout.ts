/**
 * Workload 2 (fan-out): N graphql-ws clients (one socket each, spread over R running runs)
 * subscribed to `runEvents`, against a raw `ws` broadcast of the same events to the same number of
 * clients at the same pace (`bench/bin/raw-broadcast.ts`). Both are received by the same code in one
 * driver process (`bench/bin/fanout-driver.ts`), so every receipt time is on one clock.
 *
 * Figures: lag of each (client, event) = receipt − the event's first receipt by any client of its
 * run, p50 / p99 over all pairs, live events only; lost events = stored steps of the run a client
 * never received; duplicates and out-of-order receipts counted too. Repetitions are interleaved
 * (Airlock, raw, raw, Airlock, …) and figures are medians.
 *
 * Every subscriber is subscribed before the events of interest: the runs' first provider call is
 * held by a gate (a small proxy in this process, in front of the fake OpenAI server) until every
 * subscription has replayed the run so far; then the gate lets the runs go, staggered over one
 * provider latency, and each run makes K tool rounds at a fixed latency per call. The raw baseline
 * replays the schedule (group, offset, frame size) the Airlock server produced just before.
 */
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { CollectResult } from '../bin/fanout-driver.ts';
import type { PlayResult, ScheduledFrame } from '../bin/raw-broadcast.ts';
import { joinAirlock, postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../lib/airlock.ts';
import { redisServerAvailable, startRedis } from '../lib/redis.ts';
import { BENCH_SYSTEM_PROMPT, BENCH_TOOL_GROUP } from '../lib/agent-tool.ts';
import { startDriver, startServer, type Driver } from '../lib/children.ts';
import { cpuMs } from '../lib/proc.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, ratio, renderTable } from '../lib/stats.ts';

export interface FanoutOptions {
  /** Subscribers (one graphql-ws connection each), spread evenly over the runs. */
  readonly clients: number;
  /** Runs running at the same time. */
  readonly runs: number;
  /** Tool rounds per run (K): 3K + 2 stored steps per run. */
  readonly rounds: number;
  /** Fixed latency of every provider call, ms: the pace of a run's steps. */
  readonly latencyMs: number;
  readonly repetitions: number;
  /**
   * Also measure two instances on one PostgreSQL database and one Redis (a private redis-server):
   * runs on instance A, subscribers spread over A and B. Needs PostgreSQL and redis-server.
   */
  readonly twoInstances?: boolean;
}

/** `cluster`: two Airlock instances over Redis (runs on A, subscribers on A and B). */
type Variant = 'airlock' | 'raw' | 'cluster';

export interface FanoutSample extends Omit<CollectResult, 'schedule'> {
  readonly variant: Variant;
  readonly repetition: number;
  /** Per run: the highest sequence already received (replayed) when the runs were let go. */
  readonly liveAbove: readonly number[];
  /** CPU of the server processes (Airlock's instances, or the raw broadcaster) from the release to the end. */
  readonly serverCpuMs: number | null;
  /** Two instances only: CPU of redis-server over the same span. */
  readonly redisCpuMs?: number | null;
  /** Raw only: how late the broadcaster's timer fired at worst. */
  readonly lateMs?: number;
}

export interface FanoutResult {
  readonly options: FanoutOptions;
  readonly kind: DbKind;
  readonly samples: readonly FanoutSample[];
  readonly median: Record<Variant, { readonly p50: number; readonly p99: number; readonly max: number }>;
  /** Airlock ÷ raw, of the medians. */
  readonly ratio: { readonly p50: number | null; readonly p99: number | null };
  /** Summed over every Airlock repetition (each must be 0). */
  readonly airlockDefects: Defects;
  /** Two instances (null when not measured): p99 against one instance and against raw, defects, CPU per delivery. */
  readonly cluster: {
    readonly p99VsSingle: number | null;
    readonly p99VsRaw: number | null;
    readonly defects: Defects;
    readonly serverCpuUsPerDelivery: number;
    readonly redisCpuUsPerDelivery: number;
    readonly singleCpuUsPerDelivery: number;
    /** p99 lag of the subscribers on A (where the runs execute) and on B (events through Redis). */
    readonly p99OnA: number;
    readonly p99OnB: number;
  } | null;
  readonly table: string;
}

interface Defects {
  readonly lost: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  readonly unexpected: number;
  readonly unfinished: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Instances of one deployment under test: runs start on the first, subscribers spread over all. */
interface Deployment {
  readonly instances: readonly AirlockUnderTest[];
  readonly configurationId: string;
  readonly redisPid: number | null;
}

// ── the gate ───────────────────────────────────────────────────────────────
interface Gate {
  /** The OpenAI base URL to give Airlock (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  /** From now on, the first provider call of a run waits until `release`. */
  hold(): void;
  held(): number;
  /** Lets the held calls go, one every `spacingMs`, in arrival order; later first calls pass. */
  release(spacingMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** A proxy to the fake OpenAI server that can hold the first call of every run (no assistant turn yet). */
function startGate(fakeBaseUrl: string): Promise<Gate> {
  const upstream = new URL(fakeBaseUrl);
  const agent = new Agent({ keepAlive: true });
  let holding = false;
  const waiting: (() => void)[] = [];
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const call = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      },
    );
    call.on('error', () => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'fake server unreachable' } }));
    });
    call.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let first = false;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { messages?: { role: string }[] };
        first = !(parsed.messages ?? []).some((message) => message.role === 'assistant');
      } catch {
        // not JSON: the fake server answers it
      }
      if (holding && first) waiting.push(() => forward(req, body, res));
      else forward(req, body, res);
    });
  });
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
        hold: () => {
          holding = true;
        },
        held: () => waiting.length,
        release: async (spacingMs) => {
          holding = false;
          const start = performance.now();
          for (const [index, go] of waiting.splice(0).entries()) {
            const wait = start + index * spacingMs - performance.now();
            if (wait >= 1) await sleep(wait);
            go();
          }
        },
        stop: () =>
          new Promise((resolveStop) => {
            agent.destroy();
            server.closeAllConnections();
            server.close(() => resolveStop());
          }),
      });
    });
  });
}

// ── set-up ─────────────────────────────────────────────────────────────────
/** Provider at the gate → model `bench-k<K>-l<latency>` → configuration (METADATA, the bench tool group). */
async function createPacedConfiguration(airlock: AirlockUnderTest, baseUrl: string, options: FanoutOptions): Promise<string> {
  const provider = await airlock.gql<{ createProvider: { id?: string } }>(
    `mutation($input: CreateProviderInput!) { createProvider(input: $input) { ... on Provider { id } ... on Error { message } } }`,
    { input: { name: 'bench-openai-gated', kind: 'OPENAI', baseUrl, apiKey: 'sk-bench-not-a-real-key', settings: { timeoutMs: 300_000 } } },
  );
  const model = await airlock.gql<{ createModel: { id?: string } }>(
    `mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } ... on Error { message } } }`,
    { input: { providerId: provider.createProvider.id, name: 'bench-model-paced', providerModelId: `bench-k${options.rounds}-l${options.latencyMs}` } },
  );
  const configuration = await airlock.gql<{ createConfiguration: { id?: string; message?: string } }>(
    `mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } ... on Error { message } } }`,
    {
      input: {
        name: 'bench-fanout',
        modelId: model.createModel.id,
        systemPrompt: BENCH_SYSTEM_PROMPT,
        privacyLevel: 'METADATA',
        maxIterations: options.rounds + 2,
        allowedToolGroups: [BENCH_TOOL_GROUP],
      },
    },
  );
  if (!configuration.createConfiguration.id) throw new Error(`could not create the fan-out configuration: ${JSON.stringify(configuration)}`);
  return configuration.createConfiguration.id;
}

/** The stored step sequences of a run, read back over GraphQL once it has finished, page by page (100 at most). */
async function storedSequences(airlock: AirlockUnderTest, runId: string): Promise<number[]> {
  const sequences: number[] = [];
  for (let after: string | null = null; ; ) {
    const data: { run: { steps: { edges: { node: { sequence: number } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null } = await airlock.gql(
      `query($id: ID!, $after: String) { run(id: $id) { steps(first: 100, after: $after) { edges { node { sequence } } pageInfo { hasNextPage endCursor } } } }`,
      { id: runId, after },
      airlock.userToken,
    );
    if (!data.run) throw new Error(`run ${runId} is not visible`);
    sequences.push(...data.run.steps.edges.map((edge) => edge.node.sequence));
    if (!data.run.steps.pageInfo.hasNextPage) return sequences;
    after = data.run.steps.pageInfo.endCursor;
  }
}

// ── the workload ───────────────────────────────────────────────────────────
export async function runFanout(options: FanoutOptions): Promise<FanoutResult> {
  const kind: DbKind = (await postgresAvailable()) ? 'postgres' : 'pglite';
  const step = (text: string) => progress(`[fanout] ${text}`);
  step('starting the fake OpenAI server, the raw ws broadcaster and Airlock');
  const fake = await startServer('bench/bin/fake-openai.ts', {}, /listening (\d+)/);
  const stops: (() => Promise<void>)[] = [() => fake.stop()];
  try {
    const gate = await startGate(`http://127.0.0.1:${fake.ready[1]}/v1`);
    stops.push(() => gate.stop());
    const driver = await startDriver('bench/bin/fanout-driver.ts');
    stops.push(() => driver.stop());
    const raw = await startDriver('bench/bin/raw-broadcast.ts');
    stops.push(() => raw.stop());
    const { port: rawPort } = await raw.request<{ port: number }>({ type: 'listen' });
    // BENCH_FANOUT_PROFILE_DIR=<dir>: the one-instance server writes a V8 CPU profile there when it stops.
    const profileDir = process.env.BENCH_FANOUT_PROFILE_DIR;
    const airlock = await startAirlock(kind, { fakeBaseUrl: gate.baseUrl, k: options.rounds, ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}) });
    stops.push(() => airlock.stop());
    const single: Deployment = { instances: [airlock], configurationId: await createPacedConfiguration(airlock, gate.baseUrl, options), redisPid: null };
    let cluster: Deployment | null = null;
    if (options.twoInstances && kind === 'postgres' && redisServerAvailable()) {
      step('starting a private redis-server and two Airlock instances on it');
      const redis = await startRedis();
      stops.push(() => redis.stop());
      const first = await startAirlock(kind, { fakeBaseUrl: gate.baseUrl, k: options.rounds, env: { REDIS_URL: redis.url, AIRLOCK_REDIS_PREFIX: 'bench:' } });
      stops.push(() => first.stop());
      const second = await joinAirlock(first);
      stops.push(() => second.stop());
      cluster = { instances: [first, second], configurationId: await createPacedConfiguration(first, gate.baseUrl, options), redisPid: redis.pid };
    } else if (options.twoInstances) {
      step('two instances not measured: they need PostgreSQL and redis-server');
    }

    const samples: FanoutSample[] = [];
    let schedule: readonly ScheduledFrame[] | null = null;
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      // Airlock first on even repetitions: the raw baseline replays the latest Airlock schedule.
      const forward: Variant[] = cluster ? ['airlock', 'raw', 'cluster'] : ['airlock', 'raw'];
      const order = repetition % 2 === 0 ? forward : [...forward].reverse();
      for (const variant of order) {
        const title = { airlock: 'Airlock runEvents', raw: 'raw ws', cluster: 'two instances' }[variant];
        const label = `repetition ${repetition + 1}/${options.repetitions}, ${title}`;
        if (variant === 'raw') {
          samples.push(await rawRepetition(driver, raw, rawPort, schedule!, options, repetition, (text) => step(`${label}: ${text}`)));
        } else {
          const { sample, frames } = await airlockRepetition(driver, gate, variant === 'airlock' ? single : cluster!, variant, options, repetition, (text) => step(`${label}: ${text}`));
          samples.push(sample);
          if (variant === 'airlock') schedule = frames;
        }
      }
    }
    progressDone();
    return summarise(options, kind, samples);
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop();
  }
}

async function airlockRepetition(
  driver: Driver,
  gate: Gate,
  deployment: Deployment,
  variant: Exclude<Variant, 'raw'>,
  options: FanoutOptions,
  repetition: number,
  step: (text: string) => void,
): Promise<{ sample: FanoutSample; frames: readonly ScheduledFrame[] }> {
  const [first] = deployment.instances;
  gate.hold();
  step(`starting ${options.runs} runs (held at their first provider call)`);
  const { runIds } = await driver.request<{ runIds: string[] }>({ type: 'start-runs', wsUrl: first!.wsUrl, token: first!.userToken, configurationId: deployment.configurationId, runs: options.runs });
  for (let waited = 0; gate.held() < options.runs; waited += 20) {
    if (waited > 60_000) throw new Error(`only ${gate.held()} of ${options.runs} runs reached their first provider call`);
    await sleep(20);
  }
  const wsUrls = deployment.instances.map((instance) => instance.wsUrl);
  step(`opening ${options.clients} runEvents subscriptions on ${wsUrls.length} instance(s)`);
  await driver.request({ type: 'open-airlock', wsUrl: first!.wsUrl, wsUrls, token: first!.userToken, runIds, count: options.clients });
  const { liveAbove } = await driver.request<{ liveAbove: number[] }>({ type: 'mark-live', groups: options.runs });
  step(`${options.runs} runs streaming to ${options.clients} subscribers`);
  const pids = deployment.instances.map((instance) => instance.server.pid);
  const cpuBefore = totalCpuMs(pids);
  const redisBefore = deployment.redisPid === null ? null : cpuMs(deployment.redisPid);
  await gate.release(options.latencyMs / options.runs);
  await driver.request({ type: 'finish-runs' });
  const expected = await Promise.all(runIds.map((runId) => storedSequences(first!, runId)));
  const collected = await driver.request<CollectResult>({ type: 'collect', expected, timeoutMs: 30_000 });
  const cpuAfter = totalCpuMs(pids);
  const redisAfter = deployment.redisPid === null ? null : cpuMs(deployment.redisPid);
  const { schedule, ...figures } = collected;
  return {
    sample: {
      variant,
      repetition,
      liveAbove,
      serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
      redisCpuMs: redisBefore === null || redisAfter === null ? null : redisAfter - redisBefore,
      ...figures,
    },
    frames: schedule,
  };
}

/** CPU of several processes together (null when one cannot be read). */
function totalCpuMs(pids: readonly number[]): number | null {
  const each = pids.map(cpuMs);
  return each.some((value) => value === null) ? null : each.reduce<number>((sum, value) => sum + value!, 0);
}

async function rawRepetition(
  driver: Driver,
  raw: Driver,
  rawPort: number,
  schedule: readonly ScheduledFrame[],
  options: FanoutOptions,
  repetition: number,
  step: (text: string) => void,
): Promise<FanoutSample> {
  step(`opening ${options.clients} ws clients`);
  await driver.request({ type: 'open-raw', url: `ws://127.0.0.1:${rawPort}`, groups: options.runs, count: options.clients });
  const { liveAbove } = await driver.request<{ liveAbove: number[] }>({ type: 'mark-live', groups: options.runs });
  step(`broadcasting ${schedule.length} events to ${options.clients} clients`);
  const cpuBefore = cpuMs(raw.pid);
  const played = await raw.request<PlayResult>({ type: 'play', schedule, clients: options.clients });
  const expected = Array.from({ length: options.runs }, (_, group) =>
    schedule
      .filter((frame) => frame.group === group)
      .map((frame) => frame.sequence)
      .sort((a, b) => a - b),
  );
  const collected = await driver.request<CollectResult>({ type: 'collect', expected, timeoutMs: 30_000 });
  const cpuAfter = cpuMs(raw.pid);
  const { schedule: _received, ...figures } = collected;
  return { variant: 'raw', repetition, liveAbove, serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, lateMs: played.lateMs, ...figures };
}

function summarise(options: FanoutOptions, kind: DbKind, samples: readonly FanoutSample[]): FanoutResult {
  const of = (variant: Variant) => samples.filter((sample) => sample.variant === variant);
  const medians = (variant: Variant) => ({
    p50: median(of(variant).map((sample) => sample.lagMs.p50)),
    p99: median(of(variant).map((sample) => sample.lagMs.p99)),
    max: median(of(variant).map((sample) => sample.lagMs.max)),
  });
  const figures = { airlock: medians('airlock'), raw: medians('raw'), cluster: medians('cluster') };
  const sum = (variant: Variant, key: keyof Defects) => of(variant).reduce((total, sample) => total + sample[key], 0);
  const defectsOf = (variant: Variant): Defects => ({
    lost: sum(variant, 'lost'),
    duplicates: sum(variant, 'duplicates'),
    outOfOrder: sum(variant, 'outOfOrder'),
    unexpected: sum(variant, 'unexpected'),
    unfinished: sum(variant, 'unfinished'),
  });
  /** Median CPU per delivered event, µs (of the servers, or of Redis). */
  const perDelivery = (variant: Variant, cpu: (sample: FanoutSample) => number | null | undefined) =>
    median(of(variant).map((sample) => ((cpu(sample) ?? Number.NaN) * 1000) / sample.deliveries));
  const p99Ratio = ratio(figures.airlock.p99, figures.raw.p99);
  const measuredCluster = of('cluster').length > 0;
  const row = (variant: Variant, title: string) => {
    const runs = of(variant);
    return [
      title,
      String(runs[0]?.subscribers ?? 0),
      fmt(median(runs.map((sample) => sample.liveEvents)), 0),
      fmt(median(runs.map((sample) => sample.deliveries)), 0),
      fmt(figures[variant].p50),
      fmt(figures[variant].p99),
      fmt(figures[variant].max),
      variant === 'raw' ? '1.00×' : fmtRatio(ratio(figures[variant].p99, figures.raw.p99)),
      String(sum(variant, 'lost')),
      String(sum(variant, 'duplicates') + sum(variant, 'outOfOrder') + sum(variant, 'unexpected')),
      String(sum(variant, 'unfinished')),
      fmt(median(runs.map((sample) => sample.serverCpuMs ?? Number.NaN))),
      fmt(perDelivery(variant, (sample) => sample.serverCpuMs)),
      variant === 'cluster' ? fmt(perDelivery(variant, (sample) => sample.redisCpuMs)) : '—',
    ];
  };
  const steps = 3 * options.rounds + 2;
  const rows = [row('raw', 'raw ws broadcast (same frames, same pace)'), row('airlock', 'Airlock runEvents (graphql-ws), one instance')];
  if (measuredCluster) rows.push(row('cluster', 'Airlock runEvents, two instances over Redis'));
  const table = [
    `${options.runs} runs × ${steps} steps (K = ${options.rounds} tool rounds, ${options.latencyMs} ms per provider call), ` +
      `${options.clients} subscribers (${Math.round(options.clients / options.runs)} per run), ${options.repetitions} interleaved repetitions, medians; ` +
      `Airlock on ${kind === 'postgres' ? 'PostgreSQL' : 'PGlite'}` +
      (measuredCluster ? '; two instances: runs on A, subscribers half on A and half on B, lag measured from the first receipt by any subscriber of the run' : ''),
    renderTable(
      ['variant', 'clients', 'live events', 'deliveries', 'p50 lag ms', 'p99 lag ms', 'max lag ms', 'p99 × raw', 'lost', 'dup/order/extra', 'unfinished', 'server CPU ms', 'CPU µs/delivery', 'Redis CPU µs/delivery'],
      rows,
    ),
  ].join('\n');
  return {
    options,
    kind,
    samples,
    median: figures,
    ratio: { p50: ratio(figures.airlock.p50, figures.raw.p50), p99: p99Ratio },
    airlockDefects: defectsOf('airlock'),
    cluster: measuredCluster
      ? {
          p99VsSingle: ratio(figures.cluster.p99, figures.airlock.p99),
          p99VsRaw: ratio(figures.cluster.p99, figures.raw.p99),
          defects: defectsOf('cluster'),
          serverCpuUsPerDelivery: perDelivery('cluster', (sample) => sample.serverCpuMs),
          redisCpuUsPerDelivery: perDelivery('cluster', (sample) => sample.redisCpuMs),
          singleCpuUsPerDelivery: perDelivery('airlock', (sample) => sample.serverCpuMs),
          p99OnA: median(of('cluster').map((sample) => sample.p99ByInstance[0] ?? Number.NaN)),
          p99OnB: median(of('cluster').map((sample) => sample.p99ByInstance[1] ?? Number.NaN)),
        }
      : null,
    table,
  };
}

const clean = (defects: Defects) => Object.values(defects).every((count) => count === 0);
const describeDefects = (defects: Defects) =>
  `lost ${defects.lost}, duplicates ${defects.duplicates}, out of order ${defects.outOfOrder}, unexpected ${defects.unexpected}, unfinished ${defects.unfinished}`;

/** The target of issue 16: two instances' p99 ≤ 2 × one instance's and < 100 ms, nothing lost, duplicated or reordered. */
export function twoInstanceTarget(result: FanoutResult): { target: string; figure: string; met: boolean | null } | null {
  const cluster = result.cluster;
  if (!cluster) return null;
  return {
    target: 'two instances: p99 lag ≤ 2 × one instance and < 100 ms, 0 lost / duplicated / out of order',
    figure:
      `p99 ${fmt(result.median.cluster.p99)} ms (subscribers on A ${fmt(cluster.p99OnA)} ms, on B ${fmt(cluster.p99OnB)} ms) vs one instance ${fmt(result.median.airlock.p99)} ms (${fmtRatio(cluster.p99VsSingle)}), vs raw ${fmtRatio(cluster.p99VsRaw)}; ` +
      `${describeDefects(cluster.defects)}; CPU per delivery: servers ${fmt(cluster.serverCpuUsPerDelivery)} µs (one instance ${fmt(cluster.singleCpuUsPerDelivery)} µs), Redis ${fmt(cluster.redisCpuUsPerDelivery)} µs`,
    met: cluster.p99VsSingle === null ? null : cluster.p99VsSingle <= 2 && result.median.cluster.p99 < 100 && clean(cluster.defects),
  };
}

/** The target of issue 8: p99 lag ≤ 2 × the raw ws baseline and < 100 ms, no event lost (nor duplicated, reordered or unfinished). */
export function fanoutTarget(result: FanoutResult): { target: string; figure: string; met: boolean | null } {
  const { airlock, raw } = result.median;
  const p99Ratio = result.ratio.p99;
  return {
    target: 'p99 lag ≤ 2 × raw ws and < 100 ms, 0 lost events',
    figure: `p99 ${fmt(airlock.p99)} ms vs raw ${fmt(raw.p99)} ms (${fmtRatio(p99Ratio)}); ${describeDefects(result.airlockDefects)}`,
    met: p99Ratio === null ? null : p99Ratio <= 2 && airlock.p99 < 100 && clean(result.airlockDefects),
  };
}

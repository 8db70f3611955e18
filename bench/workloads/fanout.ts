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
import { postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../lib/airlock.ts';
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
}

type Variant = 'airlock' | 'raw';

export interface FanoutSample extends Omit<CollectResult, 'schedule'> {
  readonly variant: Variant;
  readonly repetition: number;
  /** Per run: the highest sequence already received (replayed) when the runs were let go. */
  readonly liveAbove: readonly number[];
  /** CPU of the server process (Airlock or the raw broadcaster) from the release to the end. */
  readonly serverCpuMs: number | null;
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
  readonly airlockDefects: { readonly lost: number; readonly duplicates: number; readonly outOfOrder: number; readonly unexpected: number; readonly unfinished: number };
  readonly table: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const airlock = await startAirlock(kind, { fakeBaseUrl: gate.baseUrl, k: options.rounds });
    stops.push(() => airlock.stop());
    const configurationId = await createPacedConfiguration(airlock, gate.baseUrl, options);

    const samples: FanoutSample[] = [];
    let schedule: readonly ScheduledFrame[] | null = null;
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      // Airlock first on even repetitions: the raw baseline replays the latest Airlock schedule.
      const order: Variant[] = repetition % 2 === 0 ? ['airlock', 'raw'] : ['raw', 'airlock'];
      for (const variant of order) {
        const label = `repetition ${repetition + 1}/${options.repetitions}, ${variant === 'airlock' ? 'Airlock runEvents' : 'raw ws'}`;
        if (variant === 'airlock') {
          const { sample, frames } = await airlockRepetition(driver, gate, airlock, configurationId, options, repetition, (text) => step(`${label}: ${text}`));
          samples.push(sample);
          schedule = frames;
        } else {
          samples.push(await rawRepetition(driver, raw, rawPort, schedule!, options, repetition, (text) => step(`${label}: ${text}`)));
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
  airlock: AirlockUnderTest,
  configurationId: string,
  options: FanoutOptions,
  repetition: number,
  step: (text: string) => void,
): Promise<{ sample: FanoutSample; frames: readonly ScheduledFrame[] }> {
  gate.hold();
  step(`starting ${options.runs} runs (held at their first provider call)`);
  const { runIds } = await driver.request<{ runIds: string[] }>({ type: 'start-runs', wsUrl: airlock.wsUrl, token: airlock.userToken, configurationId, runs: options.runs });
  for (let waited = 0; gate.held() < options.runs; waited += 20) {
    if (waited > 60_000) throw new Error(`only ${gate.held()} of ${options.runs} runs reached their first provider call`);
    await sleep(20);
  }
  step(`opening ${options.clients} runEvents subscriptions`);
  await driver.request({ type: 'open-airlock', wsUrl: airlock.wsUrl, token: airlock.userToken, runIds, count: options.clients });
  const { liveAbove } = await driver.request<{ liveAbove: number[] }>({ type: 'mark-live', groups: options.runs });
  step(`${options.runs} runs streaming to ${options.clients} subscribers`);
  const cpuBefore = cpuMs(airlock.server.pid);
  await gate.release(options.latencyMs / options.runs);
  await driver.request({ type: 'finish-runs' });
  const expected = await Promise.all(runIds.map((runId) => storedSequences(airlock, runId)));
  const collected = await driver.request<CollectResult>({ type: 'collect', expected, timeoutMs: 30_000 });
  const cpuAfter = cpuMs(airlock.server.pid);
  const { schedule, ...figures } = collected;
  return {
    sample: { variant: 'airlock', repetition, liveAbove, serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, ...figures },
    frames: schedule,
  };
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
  const figures = { airlock: medians('airlock'), raw: medians('raw') };
  const sum = (variant: Variant, key: 'lost' | 'duplicates' | 'outOfOrder' | 'unexpected' | 'unfinished') => of(variant).reduce((total, sample) => total + sample[key], 0);
  const airlockDefects = {
    lost: sum('airlock', 'lost'),
    duplicates: sum('airlock', 'duplicates'),
    outOfOrder: sum('airlock', 'outOfOrder'),
    unexpected: sum('airlock', 'unexpected'),
    unfinished: sum('airlock', 'unfinished'),
  };
  const p99Ratio = ratio(figures.airlock.p99, figures.raw.p99);
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
      variant === 'raw' ? '1.00×' : fmtRatio(p99Ratio),
      String(sum(variant, 'lost')),
      String(sum(variant, 'duplicates') + sum(variant, 'outOfOrder') + sum(variant, 'unexpected')),
      String(sum(variant, 'unfinished')),
      fmt(median(runs.map((sample) => sample.serverCpuMs ?? Number.NaN))),
    ];
  };
  const steps = 3 * options.rounds + 2;
  const table = [
    `${options.runs} runs × ${steps} steps (K = ${options.rounds} tool rounds, ${options.latencyMs} ms per provider call), ` +
      `${options.clients} subscribers (${Math.round(options.clients / options.runs)} per run), ${options.repetitions} interleaved repetitions, medians; ` +
      `Airlock on ${kind === 'postgres' ? 'PostgreSQL' : 'PGlite'}`,
    renderTable(
      ['variant', 'clients', 'live events', 'deliveries', 'p50 lag ms', 'p99 lag ms', 'max lag ms', 'p99 × raw', 'lost', 'dup/order/extra', 'unfinished', 'server CPU ms'],
      [row('raw', 'raw ws broadcast (same frames, same pace)'), row('airlock', 'Airlock runEvents (graphql-ws)')],
    ),
  ].join('\n');
  return { options, kind, samples, median: figures, ratio: { p50: ratio(figures.airlock.p50, figures.raw.p50), p99: p99Ratio }, airlockDefects, table };
}

/** The target of issue 8: p99 lag ≤ 2 × the raw ws baseline and < 100 ms, no event lost (nor duplicated, reordered or unfinished). */
export function fanoutTarget(result: FanoutResult): { target: string; figure: string; met: boolean | null } {
  const { airlock, raw } = result.median;
  const defects = result.airlockDefects;
  const p99Ratio = result.ratio.p99;
  const clean = defects.lost === 0 && defects.duplicates === 0 && defects.outOfOrder === 0 && defects.unexpected === 0 && defects.unfinished === 0;
  return {
    target: 'p99 lag ≤ 2 × raw ws and < 100 ms, 0 lost events',
    figure:
      `p99 ${fmt(airlock.p99)} ms vs raw ${fmt(raw.p99)} ms (${fmtRatio(p99Ratio)}); ` +
      `lost ${defects.lost}, duplicates ${defects.duplicates}, out of order ${defects.outOfOrder}, unexpected ${defects.unexpected}, unfinished ${defects.unfinished}`,
    met: p99Ratio === null ? null : p99Ratio <= 2 && airlock.p99 < 100 && clean,
  };
}

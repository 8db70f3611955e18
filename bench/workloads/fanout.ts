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
 *
 * Its parts: `fanout/gate.ts` (the proxy that holds the runs), `fanout/repetitions.ts` (one repetition
 * of a variant), `fanout/summary.ts` (medians and the table); in the driver, `fanout/initiator.ts`
 * (the runs) and `fanout/receipts.ts` (what each subscriber received, and the lag).
 */
import path from 'node:path';
import type { ScheduledFrame } from '../bin/raw-broadcast.ts';
import { BENCH_SYSTEM_PROMPT, BENCH_TOOL_GROUP } from '../lib/agent-tool.ts';
import { joinAirlock, postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { redisServerAvailable, startRedis } from '../lib/redis.ts';
import { fmt, fmtRatio } from '../lib/stats.ts';
import { startGate } from './fanout/gate.ts';
import type { FanoutOptions, Variant } from './fanout/options.ts';
import type { Defects } from './fanout/receipts.ts';
import { airlockRepetition, rawRepetition, type Deployment, type FanoutSample } from './fanout/repetitions.ts';
import { summarise, type FanoutResult } from './fanout/summary.ts';

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
    // BENCH_FANOUT_PROFILE_DIR=<dir>: the one-instance server profiles each repetition's deliveries
    // (release to last receipt, lib/window-profile.ts) into <dir>/delivery-window.cpuprofile; the last one stays.
    const profileDir = process.env.BENCH_FANOUT_PROFILE_DIR;
    const profiling = profileDir
      ? { env: { BENCH_WINDOW_PROFILE: path.join(profileDir, 'delivery-window.cpuprofile') }, nodeArgs: ['--import', 'tsx', '--import', './bench/lib/window-profile.ts'] }
      : {};
    const airlock = await startAirlock(kind, { fakeBaseUrl: gate.baseUrl, k: options.rounds, ...profiling });
    stops.push(() => airlock.stop());
    const single: Deployment = {
      instances: [airlock],
      configurationId: await createPacedConfiguration(airlock, gate.baseUrl, options),
      redisPid: null,
      redisUrl: null,
      profiled: profileDir !== undefined,
    };
    let cluster: Deployment | null = null;
    if (options.twoInstances && kind === 'postgres' && redisServerAvailable()) {
      step('starting a private redis-server and two Airlock instances on it');
      const redis = await startRedis();
      stops.push(() => redis.stop());
      const first = await startAirlock(kind, { fakeBaseUrl: gate.baseUrl, k: options.rounds, env: { REDIS_URL: redis.url, AIRLOCK_REDIS_PREFIX: 'bench:' } });
      stops.push(() => first.stop());
      const second = await joinAirlock(first);
      stops.push(() => second.stop());
      cluster = { instances: [first, second], configurationId: await createPacedConfiguration(first, gate.baseUrl, options), redisPid: redis.pid, redisUrl: redis.url, profiled: false };
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

/**
 * One repetition of a fan-out variant. Airlock (one instance or two): the runs start held at the
 * gate, the subscribers open and replay them, the gate lets them go, and what each subscriber
 * received is compared with the stored steps. Raw: the broadcaster replays the schedule of the
 * latest Airlock repetition to the same number of clients.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { PlayResult, ScheduledFrame } from '../../bin/raw-broadcast.ts';
import type { AirlockUnderTest } from '../../lib/airlock.ts';
import type { Driver } from '../../lib/children.ts';
import { cpuMs, totalCpuMs } from '../../lib/proc.ts';
import type { Gate } from './gate.ts';
import type { FanoutOptions, Variant } from './options.ts';
import type { CollectResult } from './receipts.ts';

export interface FanoutSample extends Omit<CollectResult, 'schedule'> {
  readonly variant: Variant;
  readonly repetition: number;
  /** Per run: the highest sequence already received (replayed) when the runs were let go. */
  readonly liveAbove: readonly number[];
  /** CPU of the server processes (Airlock's instances, or the raw broadcaster) from the release to the end. */
  readonly serverCpuMs: number | null;
  /** Two instances only: CPU of redis-server over the same span. */
  readonly redisCpuMs?: number | null;
  /** Two instances only: PUBLISH commands Redis processed over the same span (`INFO commandstats`). */
  readonly redisPublishes?: number | null;
  /** Raw only: how late the broadcaster's timer fired at worst. */
  readonly lateMs?: number;
}

/** Instances of one deployment under test: runs start on the first, subscribers spread over all. */
export interface Deployment {
  readonly instances: readonly AirlockUnderTest[];
  readonly configurationId: string;
  readonly redisPid: number | null;
  readonly redisUrl: string | null;
  /** The instances run lib/window-profile.ts: SIGUSR2 at the release and after the last receipt. */
  readonly profiled: boolean;
}

/** PUBLISH commands `url` has processed since it started (`cmdstat_publish:calls=…`). */
async function publishCalls(url: string | null): Promise<number | null> {
  if (url === null) return null;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return Number(/cmdstat_publish:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  } finally {
    redis.disconnect();
  }
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

export async function airlockRepetition(
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
  const publishesBefore = await publishCalls(deployment.redisUrl);
  const toggleProfiles = () => deployment.profiled && pids.forEach((pid) => process.kill(pid, 'SIGUSR2'));
  toggleProfiles();
  await gate.release(options.latencyMs / options.runs);
  await driver.request({ type: 'finish-runs' });
  const expected = await Promise.all(runIds.map((runId) => storedSequences(first!, runId)));
  const collected = await driver.request<CollectResult>({ type: 'collect', expected, timeoutMs: 30_000 });
  toggleProfiles();
  const cpuAfter = totalCpuMs(pids);
  const redisAfter = deployment.redisPid === null ? null : cpuMs(deployment.redisPid);
  const publishesAfter = await publishCalls(deployment.redisUrl);
  const { schedule, ...figures } = collected;
  return {
    sample: {
      variant,
      repetition,
      liveAbove,
      serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
      redisCpuMs: redisBefore === null || redisAfter === null ? null : redisAfter - redisBefore,
      redisPublishes: publishesBefore === null || publishesAfter === null ? null : publishesAfter - publishesBefore,
      ...figures,
    },
    frames: schedule,
  };
}

export async function rawRepetition(
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

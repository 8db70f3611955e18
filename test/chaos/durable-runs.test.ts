import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { deploymentEnv, eventually, follow, oneToN, startInstance, type Followed, type Instance } from '../helpers/instances.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.ts';
import { RUN_EVENTS, scriptedConfiguration, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

/**
 * Issue 27, the chaos suite: real server processes killed with SIGKILL at seeded-random moments
 * while 30 runs are at every kind of point (between steps, in a model call, in a read tool, in an
 * approved write tool), and a process paused with SIGSTOP past its lease. Every run must end
 * COMPLETED with steps 1..n, watchers must receive every step once and in order, and the write's
 * side effect must happen at most once. A failure prints its seed: `CHAOS_SEED=<seed>` replays it.
 */
const SEED = Number(process.env.CHAOS_SEED ?? randomInt(2 ** 31));
console.log(`durable-runs chaos seed: ${SEED} (replay with CHAOS_SEED=${SEED})`);

/** mulberry32: a small seeded generator, so that a failing schedule can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const CHAOS_TOOLS = fileURLToPath(new URL('../fixtures/tool-modules/chaos-tools.mjs', import.meta.url));
const RUNS = 30;
/** Short, so that a killed process's runs are taken over within seconds. */
const LEASE = { AIRLOCK_RUN_LEASE_MS: '1500', AIRLOCK_RUN_HEARTBEAT_MS: '300', AIRLOCK_TOOL_MODULES: CHAOS_TOOLS };

const read = (ms: number) => ({ content: `reading ${ms}`, toolCalls: [{ name: 'chaos_read', arguments: { ms } }] });
const write = (key: string, ms: number) => ({ content: `writing ${key}`, toolCalls: [{ name: 'chaos_write', arguments: { key, ms } }, { name: 'chaos_read', arguments: { ms: 50 } }] });
const done = { content: 'done' };

/** The kinds of run, each spending its time somewhere else: a kill finds each kind at another point. */
const KINDS = {
  model: { delayMs: 350, replies: [read(20), read(20), read(20), read(20), read(20), read(20), done], privacyLevel: 'FULL' as const },
  reads: { delayMs: 30, replies: [read(400), read(400), read(400), read(400), read(400), done] },
  writer: { delayMs: 60, replies: [read(300), write('w1', 900), read(300), read(300), done] },
  quick: { delayMs: 80, replies: [read(60), read(60), read(60), read(60), read(60), read(60), read(60), read(60), done] },
};
type Kind = keyof typeof KINDS;

const START_RUN = graphql(`
  mutation ChaosStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const PENDING = graphql(`
  query ChaosPending { pendingApprovals { run { id } turnDigest } }
`);
const APPROVE = graphql(`
  mutation ChaosApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }
`);
const RUN = graphql(`
  query ChaosRun($id: ID!) {
    run(id: $id) {
      status terminationReason resumeCount finishedAt
      steps(first: 100) { edges { node { sequence kind toolName toolIsError outcomeUnknown toolCallId } } }
    }
  }
`);

type StoredRun = NonNullable<Awaited<ReturnType<typeof readRun>>>;
async function readRun(instance: Instance, id: string) {
  return (await instance.gql(RUN, { id })).data?.run ?? null;
}

/** Approves every waiting turn on `approver()` (whichever instance is alive) until stopped. */
function approveAsTheyCome(approver: () => Instance) {
  let running = true;
  const loop = (async () => {
    while (running) {
      const instance = approver();
      const pending = await instance.gql(PENDING).catch(() => null);
      for (const approval of pending?.data?.pendingApprovals ?? []) {
        await instance.gql(APPROVE, { id: approval.run.id, digest: approval.turnDigest }).catch(() => null);
      }
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

/** Configurations of every kind on `instance`, by kind. */
async function configurations(instance: Instance): Promise<Record<Kind, string>> {
  const entries = await Promise.all(
    (Object.keys(KINDS) as Kind[]).map(async (kind) => {
      const { delayMs, replies, ...rest } = KINDS[kind];
      return [kind, await scriptedConfiguration(instance, `chaos-${kind}`, { replies, delayMs, maxIterations: 10, allowedToolGroups: ['chaos'], ...rest })] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Kind, string>;
}

async function startRuns(instance: Instance, ids: Record<Kind, string>, random: () => number): Promise<{ id: string; kind: Kind }[]> {
  const kinds = Object.keys(KINDS) as Kind[];
  return Promise.all(
    Array.from({ length: RUNS }, async (_, index) => {
      const kind = kinds[Math.floor(random() * kinds.length)]!;
      const started = await instance.gql(START_RUN, { input: { configurationId: ids[kind], prompt: `chaos run ${index}` } });
      return { id: member(started.data?.startRun, 'Run').id, kind };
    }),
  );
}

/** Every run COMPLETED, its steps stored 1..n, every write at most once, every started write either done once or outcome unknown. */
async function expectAllCompleted(instance: Instance, runs: { id: string; kind: Kind }[], effectsFile: string): Promise<StoredRun[]> {
  const stored = await Promise.all(
    runs.map(({ id }) => eventually(() => readRun(instance, id), (run) => run !== null && run.status !== 'RUNNING' && run.status !== 'WAITING_FOR_APPROVAL', `run ${id} to end`, 40_000)),
  );
  const effects = readFileSync(effectsFile, 'utf8').split('\n').filter((line) => line !== '');
  for (const [index, run] of stored.entries()) {
    const label = `run ${index} (${runs[index]!.kind}, seed ${SEED})`;
    expect(run, label).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED' });
    const steps = run!.steps.edges.map((edge) => edge.node);
    expect(steps.map((step) => step.sequence), label).toEqual(oneToN(steps.length));
    const runId = decodeGlobalID(runs[index]!.id).id;
    const writes = effects.filter((line) => line === `${runId} w1`).length;
    expect(writes, `${label}: the write's side effect happened at most once`).toBeLessThanOrEqual(1);
    if (runs[index]!.kind !== 'writer') continue;
    const writeSteps = steps.filter((step) => step.toolName === 'chaos_write');
    // Its result is stored once, or it ran into a crash: then its outcome is unknown and it never ran again.
    expect(writeSteps.filter((step) => !step.outcomeUnknown), `${label}: ${writes} side effects, write steps ${JSON.stringify(writeSteps)}`).toHaveLength(writes === 1 && !writeSteps.some((step) => step.outcomeUnknown) ? 1 : 0);
    for (const step of writeSteps.filter((step) => step.outcomeUnknown)) expect(step.toolIsError, label).toBe(true);
  }
  return stored.map((run) => run!);
}

/** Every watcher's subscription ended (its run did); names the ones that did not, rather than waiting for the test's timeout. */
async function allEnded(watchers: Followed<RunEvent>[]): Promise<void> {
  const ended = new Set<number>();
  watchers.forEach((watcher, index) => void watcher.ended.then(() => ended.add(index)));
  await eventually(async () => ended.size, (size) => size === watchers.length, `every watcher to end (seed ${SEED})`, 90_000).catch((error: unknown) => {
    const open = watchers.flatMap((watcher, index) => (ended.has(index) ? [] : [`run ${index}: last event ${JSON.stringify(watcher.events.at(-1))?.slice(0, 200)}`]));
    throw new Error(`${(error as Error).message}; still open: ${open.join(' | ')}`);
  });
}

const unknownOutcomes = (stored: StoredRun[]) => stored.flatMap((run) => run.steps.edges).filter((edge) => edge.node.outcomeUnknown).length;

/**
 * The watcher of each run received its steps once, in order, as stored, then the end; a watcher
 * that was watching when its run was taken over was told (`liveTakeover`).
 */
function expectWatched(watchers: Followed<RunEvent>[], stored: StoredRun[], liveTakeover: boolean) {
  for (const [index, watcher] of watchers.entries()) {
    const label = `watcher of run ${index} (seed ${SEED})`;
    const sequences = stepsOf(watcher.events).map((step) => step.sequence);
    expect(sequences, label).toEqual(stored[index]!.steps.edges.map((edge) => edge.node.sequence));
    expect(watcher.events.at(-1), label).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    if (liveTakeover && stored[index]!.resumeCount > 0) expect(watcher.events.some((event) => event.__typename === 'RunResumedEvent'), label).toBe(true);
  }
}

describe.skipIf(!TEST_REDIS_URL || !process.env.TEST_DATABASE_URL)('durable runs under kill -9 and SIGSTOP: two processes on PostgreSQL and Redis', () => {
  const random = seeded(SEED);
  const effectsDir = mkdtempSync(path.join(tmpdir(), 'airlock-chaos-'));
  const effectsFile = path.join(effectsDir, 'effects');
  writeFileSync(effectsFile, '');
  let database: TestDatabase;
  const instances: Instance[] = [];
  afterAll(async () => {
    if (process.env.CHAOS_DEBUG) instances.forEach((instance, index) => writeFileSync(`/tmp/chaos-pg-${index}.log`, instance.output()));
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await database?.drop();
    rmSync(effectsDir, { recursive: true, force: true });
  });

  it('should finish every run on B after A was killed at a seeded moment, watchers on B seeing every step once, writes at most once; a paused process writes nothing after SIGCONT', async () => {
    database = await createTestDatabase('postgres');
    const deployment = deploymentEnv({ DATABASE_URL: database.databaseUrl!, REDIS_URL: TEST_REDIS_URL!, AIRLOCK_REDIS_PREFIX: uniquePrefix('chaos'), CHAOS_EFFECTS_FILE: effectsFile, ...LEASE });
    // Every instance that started is stopped in afterAll, even when the other did not start.
    const starts = await Promise.allSettled([startInstance(deployment.env), startInstance(deployment.env)]);
    for (const start of starts) if (start.status === 'fulfilled') instances.push(start.value);
    const [a, b] = starts.map((start) => {
      if (start.status === 'rejected') throw start.reason;
      return start.value;
    }) as [Instance, Instance];
    const ids = await configurations(a);
    let alive = a;
    const stopApproving = approveAsTheyCome(() => alive);
    const watcherClient = wsClient(b.url, deployment.adminToken);
    try {
      const runs = await startRuns(a, ids, random);
      const watchers = runs.map(({ id }) => follow(watcherClient, RUN_EVENTS, { runId: id }, (data) => data.runEvents as RunEvent));
      const killAfterMs = 400 + Math.floor(random() * 1_200);
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await a.stop('SIGKILL');
      alive = b;
      const stored = await expectAllCompleted(b, runs, effectsFile);
      await allEnded(watchers);
      expectWatched(watchers, stored, true);
      const resumed = stored.filter((run) => run.resumeCount > 0).length;
      console.log(`chaos (PostgreSQL, seed ${SEED}): A killed after ${killAfterMs} ms; ${resumed} of ${RUNS} runs taken over by B, ${unknownOutcomes(stored)} writes of unknown outcome`);
      expect(resumed, 'the kill found runs in flight').toBeGreaterThan(0);
    } finally {
      await stopApproving();
      await watcherClient.dispose();
    }

    // SIGSTOP past the lease, then SIGCONT: the paused process finds its run taken over and writes nothing.
    const paused = await startInstance(deployment.env);
    instances.push(paused);
    const started = await paused.gql(START_RUN, { input: { configurationId: ids.model, prompt: 'paused' } });
    const runId = member(started.data?.startRun, 'Run').id;
    await eventually(() => readRun(b, runId), (run) => (run?.steps.edges.length ?? 0) >= 2, 'two steps before the pause');
    paused.child.kill('SIGSTOP');
    const finished = await eventually(() => readRun(b, runId), (run) => run?.status === 'COMPLETED', 'the paused run finished by B', 40_000);
    paused.child.kill('SIGCONT');
    await eventually(
      async () => paused.messages(),
      (messages) => messages.some((message) => /taken over by another process/.test(message)),
      'the paused process to find its run taken over',
    );
    expect(await readRun(b, runId)).toEqual(finished);
    expect(finished!.resumeCount).toBe(1);
    expect(finished!.steps.edges.map((edge) => edge.node.sequence)).toEqual(oneToN(finished!.steps.edges.length));
  }, 180_000);
});

describe('durable runs under kill -9: one process on an embedded database, started again', () => {
  const random = seeded(SEED + 1);
  const dir = mkdtempSync(path.join(tmpdir(), 'airlock-chaos-pglite-'));
  const effectsFile = path.join(dir, 'effects');
  writeFileSync(effectsFile, '');
  let instance: Instance | undefined;
  afterAll(async () => {
    if (process.env.CHAOS_DEBUG && instance) writeFileSync('/tmp/chaos-pglite-1.log', instance.output());
    await instance?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('should finish every run in the restarted process, its watchers replaying every step once, writes at most once', async () => {
    const deployment = deploymentEnv({ AIRLOCK_DATA_DIR: path.join(dir, 'data'), CHAOS_EFFECTS_FILE: effectsFile, ...LEASE });
    instance = await startInstance(deployment.env);
    const ids = await configurations(instance);
    let stopApproving = approveAsTheyCome(() => instance!);
    const runs = await startRuns(instance, ids, random);
    const killAfterMs = 400 + Math.floor(random() * 1_200);
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    await instance.stop('SIGKILL');
    await stopApproving();
    if (process.env.CHAOS_DEBUG) writeFileSync('/tmp/chaos-pglite-0.log', instance.output());
    instance = await startInstance(deployment.env);
    stopApproving = approveAsTheyCome(() => instance!);
    const watcherClient = wsClient(instance.url, deployment.adminToken);
    try {
      // Clients of the dead process reconnect and replay from the start (or their last sequence).
      const watchers = runs.map(({ id }) => follow(watcherClient, RUN_EVENTS, { runId: id }, (data) => data.runEvents as RunEvent));
      const stored = await expectAllCompleted(instance, runs, effectsFile);
      await allEnded(watchers);
      // They subscribed after the restarted process took the runs over: they replay, no live takeover.
      expectWatched(watchers, stored, false);
      const resumed = stored.filter((run) => run.resumeCount > 0).length;
      console.log(`chaos (PGlite, seed ${SEED}): killed after ${killAfterMs} ms; ${resumed} of ${RUNS} runs continued by the restarted process, ${unknownOutcomes(stored)} writes of unknown outcome`);
      expect(resumed, 'the kill found runs in flight').toBeGreaterThan(0);
    } finally {
      await stopApproving();
      await watcherClient.dispose();
    }
    // A deadline that only names a hang: two process starts and the runs took over 120 s at load 15 (2 cores).
  }, 300_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { deploymentEnv, eventually, follow, oneToN, startInstance, toolRounds, type Instance } from '../helpers/instances.ts';
import { REDIS_SERVER, startPrivateRedis, uniquePrefix, type PrivateRedis } from '../helpers/redis.ts';
import { collect, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

const START_RUN = graphql(`
  mutation FaultsStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const CANCEL_RUN = graphql(`
  mutation FaultsCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }
`);
const RUN_STATE = graphql(`
  query FaultsRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }
`);
const RUN_UPDATES = graphql(`
  subscription FaultsRunUpdates { runUpdates { snapshot run { id status terminationReason } } }
`);

const sequences = (events: readonly RunEvent[]) => stepsOf(events).map((step) => step.sequence);
const count = (messages: string[], pattern: RegExp) => messages.filter((message) => pattern.test(message)).length;

/**
 * Faults of a deployment of two instances: its Redis (a private redis-server of this file's own,
 * killed and restarted by pid) and one instance killed with SIGKILL.
 */
describe.skipIf(!REDIS_SERVER || !process.env.TEST_DATABASE_URL)('faults of two instances on one PostgreSQL and one Redis', () => {
  let database: TestDatabase;
  let redis: PrivateRedis;
  let a: Instance;
  let b: Instance;
  let admin: string;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    redis = await startPrivateRedis();
    // A short lease: a killed instance's runs are taken over 1.5 s after its last renewal.
    const deployment = deploymentEnv({
      DATABASE_URL: database.databaseUrl!,
      REDIS_URL: redis.url,
      AIRLOCK_REDIS_PREFIX: uniquePrefix('faults'),
      AIRLOCK_RUN_HEARTBEAT_MS: '300',
      AIRLOCK_RUN_LEASE_MS: '1500',
    });
    admin = deployment.adminToken;
    a = await startInstance(deployment.env);
    b = await startInstance(deployment.env);
  });
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
    await redis?.stop();
    await database?.drop();
  });

  it('should keep runs going through a Redis restart: watchers on B get an error they can act on, a cancel on B still lands, one log line per outage, and B follows again once Redis is back', async () => {
    const configurationId = await scriptedConfiguration(a, 'through-outage', { replies: toolRounds(30), finalReply: { content: 'done' }, delayMs: 100, maxIterations: 30, allowedToolGroups: ['structure'] });
    const doomed = await scriptedConfiguration(a, 'cancelled-in-outage', { replies: toolRounds(40), delayMs: 150, maxIterations: 50, allowedToolGroups: ['structure'] });
    const initiator = wsClient(a.url, admin);
    const watcherOnB = wsClient(b.url, admin);
    try {
      const driven = follow(initiator, RUN_AGENT, { input: { configurationId, prompt: 'keep going' } }, (data) => data.runAgent as RunEvent);
      await driven.until((events) => stepsOf(events).length >= 2, 'two steps on A');
      const runId = member(driven.events[0], 'RunStartedEvent').run.id;
      const other = member((await a.gql(START_RUN, { input: { configurationId: doomed, prompt: 'to cancel' } })).data?.startRun, 'Run');
      const watching = follow(watcherOnB, RUN_EVENTS, { runId }, (data) => data.runEvents as RunEvent);
      await watching.until((events) => stepsOf(events).length >= 3, 'three steps on B');

      await redis.stop();
      // The watcher on B learns that its live feed is gone (and what to do), instead of hanging.
      expect(JSON.stringify(await watching.ended)).toMatch(/EVENT_BUS_UNAVAILABLE.*|Lost the live feed/);
      // The run goes on on A, streaming to its initiator there, storing every step.
      const stepsAtOutage = stepsOf(driven.events).length;
      await driven.until((events) => stepsOf(events).length >= stepsAtOutage + 3, 'steps on A during the outage');
      // A cancel asked on B while Redis is away reaches A through the database, at A's next heartbeat.
      member((await b.gql(CANCEL_RUN, { id: other.id })).data?.cancelRun, 'Run');
      const cancelled = await eventually(() => b.gql(RUN_STATE, { id: other.id }), (result) => result.data?.run?.status !== 'RUNNING', 'the cancel during the outage', 10_000);
      expect(cancelled.data!.run!.status).toBe('CANCELLED');

      await redis.start();
      await eventually(async () => count(b.messages(), /the subscriber connection to Redis is back/), (seen) => seen === 1, 'B to reconnect', 15_000);
      const again = await collect(watcherOnB, RUN_EVENTS, { runId });
      await driven.ended;
      const stored = (await b.gql(RUN_STATE, { id: runId })).data!.run!;
      expect(stored.status).toBe('COMPLETED');
      expect(sequences(again)).toEqual(oneToN(stored.steps.edges.length));
      expect(sequences(driven.events)).toEqual(oneToN(stored.steps.edges.length));
      expect(again.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
      for (const instance of [a, b]) {
        expect(count(instance.messages(), /lost the subscriber connection to Redis/)).toBe(1);
        expect(count(instance.messages(), /lost the publisher connection to Redis/)).toBe(1);
      }
      expect(a.output() + b.output()).not.toContain(admin);
    } finally {
      await Promise.all([initiator.dispose(), watcherOnB.dispose()]);
    }
  }, 90_000);

  it('should continue on B a run of an instance killed with SIGKILL: its watchers on B see it resumed and finished, every step once and in order', async () => {
    const configurationId = await scriptedConfiguration(a, 'orphaned', {
      replies: [...toolRounds(16), { content: 'done after the crash' }],
      delayMs: 150,
      maxIterations: 30,
      allowedToolGroups: ['structure'],
    });
    const watcherOnB = wsClient(b.url, admin);
    try {
      const list = follow(watcherOnB, RUN_UPDATES, {}, (data) => data.runUpdates as { snapshot: boolean; run: { id: string; status: string; terminationReason: string | null } });
      const started = member((await a.gql(START_RUN, { input: { configurationId, prompt: 'until killed' } })).data?.startRun, 'Run');
      const watching = follow(watcherOnB, RUN_EVENTS, { runId: started.id }, (data) => data.runEvents as RunEvent);
      await watching.until((events) => stepsOf(events).length >= 3, 'three steps on B');
      await a.stop('SIGKILL');
      expect(await watching.ended).toBeNull();
      const resumed = watching.events.find((event) => event.__typename === 'RunResumedEvent');
      expect(resumed).toMatchObject({ reason: 'LEASE_EXPIRED', run: { status: 'RUNNING' } });
      expect(watching.events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED', terminationReason: 'COMPLETED' } });
      // Every step once, in order, with no gap: those A stored but never published were filled from storage.
      expect(sequences(watching.events)).toEqual(oneToN(stepsOf(watching.events).length));
      const stored = await b.gql(RUN_STATE, { id: started.id });
      expect(stored.data?.run?.steps.edges.map((edge: { node: { sequence: number } }) => edge.node.sequence)).toEqual(sequences(watching.events));
      await list.until((events) => events.some((event) => event.run.id === started.id && event.run.status === 'COMPLETED'), 'the completed run on B’s list');
      list.stop();
    } finally {
      await watcherOnB.dispose();
    }
  }, 60_000);
});

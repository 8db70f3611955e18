import { randomBytes, randomUUID } from 'node:crypto';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveBusKey, MAX_MESSAGE_AGE_MS, sealBusMessage } from '../../src/cluster/signing.ts';
import { graphql } from '../gql/gql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { deploymentEnv, eventually, follow, startInstance, toolRounds, type Instance } from '../helpers/instances.ts';
import { key, samplesOf } from '../helpers/prometheus.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.ts';
import { RUN_AGENT, scriptedConfiguration, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

const CREATE_USER = graphql(`
  mutation ForgedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }
`);
const START_RUN = graphql(`
  mutation ForgedStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const CANCEL_RUN = graphql(`
  mutation ForgedCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }
`);
const RUN_STATE = graphql(`
  query ForgedRunState($id: ID!) { run(id: $id) { status steps(first: 100) { edges { node { sequence } } } } }
`);
const RUN_UPDATES = graphql(`
  subscription ForgedRunUpdates { runUpdates { snapshot run { id status } } }
`);
const DEACTIVATE = graphql(`
  mutation ForgedDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }
`);

const REJECTED = 'airlock_event_bus_rejected_messages_total';
const REASONS = ['unsigned', 'bad_mac', 'stale', 'future', 'replayed', 'unconfirmed'] as const;
const stepCount = (result: Awaited<ReturnType<Instance['gql']>>) => ((result.data as { run?: { steps: { edges: unknown[] } } })?.run?.steps.edges.length ?? 0);
/** The row id behind a GraphQL global id (what instances say to each other names rows). */
const rowId = (globalId: string) => decodeGlobalID(globalId).id;
const statusOf = (result: Awaited<ReturnType<Instance['gql']>>) => (result.data as { run?: { status: string } })?.run?.status;

/**
 * Someone who can publish on the deployment's Redis but does not hold AIRLOCK_MASTER_KEY: what they
 * publish (unsigned, signed with another key, a correctly signed message replayed after it went
 * stale) changes nothing an instance stores or shows, and is counted. A correctly signed control
 * message the database does not bear out (as if the bus key had leaked) is not acted on either.
 * Each check ends with a barrier: a real message from instance B, published after the forged ones
 * and delivered after them (Redis delivers in publish order), that A did act on.
 */
describe.skipIf(!TEST_REDIS_URL || !process.env.TEST_DATABASE_URL)('messages forged on Redis (two instances, one PostgreSQL, one Redis)', () => {
  const metricsToken = `forged-metrics-${randomBytes(16).toString('hex')}`;
  const prefix = uniquePrefix('forged');
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  let raw: Redis;
  let busKey: Buffer;
  let alice: { id: string; token: string };
  let configurationId: string;

  /** The messages an outsider can make for `channel` (the full name), `key`, `body`. */
  const forgeries = (channel: string, messageKey: string, body: string) => {
    const message = (sentAt: number) => ({ origin: randomUUID(), sequence: 1, sentAt, key: messageKey, body });
    return {
      unsigned: `${randomUUID()}\t${messageKey}\t${body}`,
      otherKey: sealBusMessage(deriveBusKey(randomBytes(32)), channel, message(Date.now())),
      stale: sealBusMessage(busKey, channel, message(Date.now() - MAX_MESSAGE_AGE_MS - 60_000)),
      /** Correctly signed and fresh: only the database check stands in its way. */
      signed: sealBusMessage(busKey, channel, message(Date.now())),
    };
  };
  const rejections = async (instance: Instance) => {
    const response = await fetch(new URL('/metrics', instance.url), { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(response.status).toBe(200);
    const samples = samplesOf(await response.text());
    return Object.fromEntries(REASONS.map((reason) => [reason, samples.get(key(REJECTED, { reason })) ?? 0])) as Record<(typeof REASONS)[number], number>;
  };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    // A long heartbeat: nothing here is learnt from the database's cancel flag by A's heartbeat.
    const deployment = deploymentEnv({
      DATABASE_URL: database.databaseUrl!,
      REDIS_URL: TEST_REDIS_URL!,
      AIRLOCK_REDIS_PREFIX: prefix,
      AIRLOCK_RUN_HEARTBEAT_MS: '60000',
      AIRLOCK_METRICS_TOKEN: metricsToken,
    });
    busKey = deriveBusKey(Buffer.from(deployment.env.AIRLOCK_MASTER_KEY!, 'base64'));
    a = await startInstance(deployment.env);
    b = await startInstance(deployment.env);
    raw = new Redis(TEST_REDIS_URL!);
    const created = member((await a.gql(CREATE_USER, { name: 'alice' })).data?.createUser, 'CreateUserPayload');
    alice = { id: created.user.id, token: created.token };
    configurationId = await scriptedConfiguration(a, 'long', { replies: toolRounds(45), delayMs: 250, maxIterations: 50, allowedToolGroups: ['structure'] });
  });
  afterAll(async () => {
    raw?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('should not cancel a run on a forged cancel (unsigned, another key, stale, or signed for a run whose cancel was never requested); a cancel from B still lands', async () => {
    const before = await rejections(a);
    const target = member((await a.gql(START_RUN, { input: { configurationId, prompt: 'keep going' } })).data?.startRun, 'Run');
    const sentinel = member((await a.gql(START_RUN, { input: { configurationId, prompt: 'to cancel' } })).data?.startRun, 'Run');
    await eventually(() => a.gql(RUN_STATE, { id: target.id }), (result) => stepCount(result) >= 2, 'two stored steps');
    const forged = forgeries(`${prefix}control`, 'cancel', JSON.stringify({ runId: rowId(target.id) }));
    for (const message of Object.values(forged)) await raw.publish(`${prefix}control`, message);

    expect(member((await b.gql(CANCEL_RUN, { id: sentinel.id })).data?.cancelRun, 'Run').id).toBe(sentinel.id);
    await eventually(() => a.gql(RUN_STATE, { id: sentinel.id }), (result) => statusOf(result) === 'CANCELLED', 'the cancel from B on A', 10_000);

    // The target goes on: more steps, still RUNNING (a forged cancel accepted would have ended it).
    const goesOn = async () => {
      const stepsThen = stepCount(await a.gql(RUN_STATE, { id: target.id }));
      const later = await eventually(() => a.gql(RUN_STATE, { id: target.id }), (result) => statusOf(result) !== 'RUNNING' || stepCount(result) >= stepsThen + 2, 'two more steps');
      expect(statusOf(later)).toBe('RUNNING');
    };
    await goesOn();
    const counted = await eventually(() => rejections(a), (after) => after.unconfirmed > before.unconfirmed, 'the signed forgery checked against the database');
    expect(counted).toEqual({ ...before, unsigned: before.unsigned + 1, bad_mac: before.bad_mac + 1, stale: before.stale + 1, unconfirmed: before.unconfirmed + 1 });
    // Once the database was asked (and said no), the run still goes on.
    await goesOn();
    await a.gql(CANCEL_RUN, { id: target.id });
  }, 60_000);

  it('should keep the sessions and runs of a user named in a forged revocation; a deactivation on B still closes a socket on A', async () => {
    const bob = member((await a.gql(CREATE_USER, { name: `bob-${randomBytes(3).toString('hex')}` })).data?.createUser, 'CreateUserPayload');
    const aliceOnA = wsClient(a.url, alice.token);
    const bobOnA = wsClient(a.url, bob.token);
    const closes = { alice: 0, bob: 0 };
    aliceOnA.on('closed', (event) => (closes.alice = (event as { code: number }).code));
    bobOnA.on('closed', (event) => (closes.bob = (event as { code: number }).code));
    try {
      const before = await rejections(a);
      const stream = follow(aliceOnA, RUN_AGENT, { input: { configurationId, prompt: 'go on' } }, (data) => data.runAgent as RunEvent);
      const bobsList = follow(bobOnA, RUN_UPDATES, {}, (data) => data.runUpdates as unknown);
      await stream.until((events) => stepsOf(events).length >= 2, 'two steps');
      const runId = member(stream.events[0], 'RunStartedEvent').run.id;
      // Bob's socket is registered once his subscription runs: a run he starts shows on his list.
      const bobsRun = member((await a.gql(START_RUN, { input: { configurationId, prompt: 'bob' } }, bob.token)).data?.startRun, 'Run');
      await bobsList.until((events) => events.length > 0, 'bob’s list');

      for (const reason of ['DEACTIVATED', 'TOKEN_ROTATED']) {
        for (const message of Object.values(forgeries(`${prefix}control`, 'revocation', JSON.stringify({ userId: rowId(alice.id), reason })))) {
          await raw.publish(`${prefix}control`, message);
        }
      }
      expect(member((await b.gql(DEACTIVATE, { id: bob.user.id })).data?.setUserActive, 'User')).toBeTruthy();
      await eventually(async () => closes.bob, (code) => code === 4403, 'bob’s socket on A closed by the deactivation on B');
      await eventually(() => a.gql(RUN_STATE, { id: bobsRun.id }), (result) => statusOf(result) === 'CANCELLED', 'bob’s run cancelled');

      // Alice's stream goes on over her open socket, and her run with it.
      const goesOn = async () => {
        const seen = stepsOf(stream.events).length;
        await stream.until((events) => stepsOf(events).length >= seen + 2, 'two more steps for alice');
        expect(closes.alice).toBe(0);
        expect(statusOf(await a.gql(RUN_STATE, { id: runId }))).toBe('RUNNING');
      };
      await goesOn();
      const counted = await eventually(() => rejections(a), (after) => after.unconfirmed >= before.unconfirmed + 2, 'both signed forgeries checked against the database');
      expect(counted).toEqual({ ...before, unsigned: before.unsigned + 2, bad_mac: before.bad_mac + 2, stale: before.stale + 2, unconfirmed: before.unconfirmed + 2 });
      // Once the database was asked (and said no), she still has her session and her run.
      await goesOn();
      stream.stop();
      await a.gql(CANCEL_RUN, { id: runId });
      bobsList.stop();
    } finally {
      await Promise.all([aliceOnA.dispose(), bobOnA.dispose()]);
    }
  }, 60_000);

  it('should not show a run of a forged started event on a user’s live list; a run started on B shows', async () => {
    const aliceOnA = wsClient(a.url, alice.token);
    const quick = await scriptedConfiguration(a, 'quick', { replies: [], finalReply: { content: 'done' }, allowedToolGroups: ['structure'] });
    try {
      const list = follow(aliceOnA, RUN_UPDATES, {}, (data) => data.runUpdates as { snapshot: boolean; run: { id: string; status: string } });
      const startOnB = async () => member((await b.gql(START_RUN, { input: { configurationId: quick, prompt: 'hello' } }, alice.token)).data?.startRun, 'Run').id;
      // The list is live once a run started on B reaches it.
      const first = await startOnB();
      await list.until((events) => events.some((event) => !event.snapshot && event.run.id === first), 'the first run from B');

      const fakes: string[] = [];
      for (const kind of ['unsigned', 'otherKey', 'stale'] as const) {
        const fake = randomUUID();
        fakes.push(fake);
        const now = new Date().toISOString();
        const row = {
          id: fake,
          user_id: rowId(alice.id),
          configuration_id: null,
          status: 'RUNNING',
          termination_reason: null,
          final_content: null,
          error_message: null,
          truncated: false,
          audit_incomplete: false,
          kind: 'AGENT',
          prompt: 'forged',
          privacy_level: 'METADATA',
          state_version: 0,
          iterations: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          estimated_cost: 0,
          created_at: now,
          heartbeat_at: now,
          finished_at: null,
          content_purged_at: null,
          cancel_requested_at: null,
        };
        const body = JSON.stringify({ type: 'started', runId: fake, run: row });
        await raw.publish(`${prefix}events`, forgeries(`${prefix}events`, fake, body)[kind]);
      }
      const second = await startOnB();
      await list.until((events) => events.some((event) => !event.snapshot && event.run.id === second), 'the second run from B');
      expect(list.events.filter((event) => fakes.includes(rowId(event.run.id)))).toEqual([]);
      list.stop();
    } finally {
      await aliceOnA.dispose();
    }
  }, 60_000);
});

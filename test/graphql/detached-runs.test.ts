import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';
import { collect, RUN_EVENTS, scriptedConfiguration, stepsOf, vendorConfiguration, wsClient } from '../helpers/runs.ts';
import { startFakeServer, type FakeServer } from '../fixtures/wires/fake-server.ts';
import { encodeOpenAi } from '../fixtures/wires/openai.ts';
import { toolRounds } from '../helpers/instances.ts';
import { eventually } from '../protocol/raw-socket.ts';

/**
 * startRun: the same run as runAgent, detached from the request that started it. The fake provider
 * HOLDS its replies until the test releases them, so "returns at once" is proved by the run still
 * being in flight after the mutation answered, never by a clock.
 */

const CAP = 4;
const LOOPING = [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }];

const START_RUN = graphql(`
  mutation DetachedStartRun($input: RunAgentInput!) {
    startRun(input: $input) {
      __typename
      ... on Run { id status }
      ... on RunLimitError { code limit message }
      ... on ValidationError { message issues { path message } }
      ... on Error { message }
    }
  }
`);
const RUN_STATE = graphql(`
  query DetachedRunState($id: ID!) { run(id: $id) { status terminationReason iterations } }
`);
const CANCEL = graphql(`
  mutation DetachedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }
`);
const CREATE_USER = graphql(`
  mutation DetachedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }
`);

/** A gate the fake provider's replies wait on. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe.each(TEST_DATABASES)('startRun on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let provider: FakeServer;
  let held: string;
  let slow: string;
  let short: string;

  const createUser = async (name: string) => member((await t.gql(CREATE_USER, { name })).data?.createUser, 'CreateUserPayload');
  const stateOf = async (runId: string) => (await t.gql(RUN_STATE, { id: runId })).data?.run;
  const storedRunsOf = (globalUserId: string) => {
    return t.app.services.db.selectFrom('runs').select(['id', 'status']).where('user_id', '=', decodeGlobalID(globalUserId).id).execute();
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_MAX_RUNNING_RUNS_PER_USER: String(CAP) } });
    url = (await t.app.server.start()).url;
    provider = await startFakeServer(encodeOpenAi);
    held = await vendorConfiguration(t, 'held-configuration', `${provider.url}/v1`, { privacyLevel: 'FULL' });
    slow = await scriptedConfiguration(t, 'slow', { replies: LOOPING, delayMs: 100, maxIterations: 50, privacyLevel: 'FULL' });
    short = await scriptedConfiguration(t, 'short', { replies: LOOPING, delayMs: 60, maxIterations: 4, finalReply: { content: 'summed up' } });
  });
  afterAll(async () => {
    await provider.close();
    await t.stop();
  });

  it('should return the Run at once, open no bus subscription, run to the end with no client, and replay through runEvents afterwards', async () => {
    const user = await createUser('detached-owner');
    const release = gate();
    provider.reset();
    provider.enqueue({ reply: { content: 'finished without anyone watching' }, after: release.opened });
    const subscribersBefore = t.app.services.bus.subscriberCount();
    try {
      const started = await t.gql(START_RUN, { input: { configurationId: held, prompt: 'run without me' } }, user.token);
      const run = member(started.data?.startRun, 'Run');
      expect(run.status).toBe('RUNNING');
      // The request has ended; the run is still in flight at the provider, and nothing listens to its topic.
      await eventually(() => provider.requests.length, (count) => count === 1);
      expect(await stateOf(run.id)).toMatchObject({ status: 'RUNNING' });
      expect(t.app.services.bus.subscriberCount()).toBe(subscribersBefore);
      release.open();
      expect(await eventually(() => stateOf(run.id), (state) => state?.status === 'COMPLETED')).toMatchObject({ terminationReason: 'COMPLETED', iterations: 1 });

      const client = wsClient(url, user.token);
      try {
        const events = await collect(client, RUN_EVENTS, { runId: run.id });
        expect(events.map((event) => event.__typename)).toEqual(['RunStartedEvent', 'RunStepEvent', 'RunStepEvent', 'RunFinishedEvent']);
        expect(stepsOf(events).map((step) => step.kind)).toEqual(['REQUEST', 'LLM']);
        expect(events.at(-1)).toMatchObject({ run: { id: run.id, status: 'COMPLETED', finalContent: 'finished without anyone watching' } });
      } finally {
        await client.dispose();
      }
    } finally {
      release.open();
    }
  });

  it('should stop a detached run with cancelRun', async () => {
    const user = await createUser('detached-canceller');
    const run = member((await t.gql(START_RUN, { input: { configurationId: slow, prompt: 'loop' } }, user.token)).data?.startRun, 'Run');
    const runId = Buffer.from(run.id, 'base64').toString('utf8').split(':')[1]!;
    await eventually(() => t.app.services.db.selectFrom('run_steps').select('sequence').where('run_id', '=', runId).execute(), (steps) => steps.length >= 2);
    expect(member((await t.gql(CANCEL, { id: run.id }, user.token)).data?.cancelRun, 'Run').id).toBe(run.id);
    const settled = await eventually(() => stateOf(run.id), (state) => state?.status !== 'RUNNING');
    expect(settled).toMatchObject({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
  });

  it('should keep a detached run going when a client following it with runEvents leaves', async () => {
    const user = await createUser('detached-follower');
    const run = member((await t.gql(START_RUN, { input: { configurationId: short, prompt: 'keep going' } }, user.token)).data?.startRun, 'Run');
    const client = wsClient(url, user.token);
    const firstStep = new Promise<void>((resolve) => {
      const unsubscribe = client.subscribe(
        { query: `subscription($runId: ID!) { runEvents(runId: $runId) { __typename } }`, variables: { runId: run.id } },
        {
          next: (result) => {
            if ((result.data as { runEvents: { __typename: string } }).runEvents.__typename === 'RunStepEvent') {
              unsubscribe();
              resolve();
            }
          },
          error: () => resolve(),
          complete: () => resolve(),
        },
      );
    });
    await firstStep;
    await client.dispose();
    const settled = await eventually(() => stateOf(run.id), (state) => state?.status !== 'RUNNING');
    expect(settled).toMatchObject({ status: 'COMPLETED', terminationReason: 'MAX_ITERATIONS', iterations: 4 });
  });

  it(`should start exactly ${CAP} of 12 detached runs started at once by one user and refuse the others with RunLimitError (RUN_LIMIT_REACHED), storing nothing for them`, async () => {
    const user = await createUser('detached-twelve');
    const release = gate();
    provider.reset();
    provider.enqueue(...Array.from({ length: CAP }, () => ({ reply: { content: 'answered' }, after: release.opened })));
    try {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) => t.gql(START_RUN, { input: { configurationId: held, prompt: `start ${index}` } }, user.token)),
      );
      const answers = results.map((result) => result.data?.startRun);
      const started = answers.filter((answer) => answer?.__typename === 'Run');
      const refused = answers.filter((answer) => answer?.__typename === 'RunLimitError');
      expect(started).toHaveLength(CAP);
      expect(refused).toHaveLength(12 - CAP);
      for (const answer of refused) {
        expect(answer).toEqual({
          __typename: 'RunLimitError',
          code: 'RUN_LIMIT_REACHED',
          limit: CAP,
          message: `You already have ${CAP} running runs, the most one user may have at once; wait for one to finish or cancel one (cancelRun), then start again.`,
        });
      }
      const stored = await storedRunsOf(user.user.id);
      expect(stored).toHaveLength(CAP);
      expect(stored.every((run) => run.status === 'RUNNING')).toBe(true);
      await eventually(() => provider.requests.length, (count) => count === CAP);
      release.open();
      await eventually(
        () => storedRunsOf(user.user.id),
        (rows) => rows.every((run) => run.status === 'COMPLETED'),
      );
      expect(await storedRunsOf(user.user.id)).toHaveLength(CAP);
    } finally {
      release.open();
    }
  });

  it('should refuse an unknown configuration with NotFoundError and a blank prompt with ValidationError, starting nothing', async () => {
    const user = await createUser('detached-mistaken');
    const unknown = Buffer.from('Configuration:00000000-0000-4000-8000-000000000000').toString('base64');
    expect((await t.gql(START_RUN, { input: { configurationId: unknown, prompt: 'hello' } }, user.token)).data?.startRun).toMatchObject({
      __typename: 'NotFoundError',
      message: 'Configuration not found.',
    });
    expect((await t.gql(START_RUN, { input: { configurationId: slow, prompt: '   ' } }, user.token)).data?.startRun).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ path: ['prompt'], message: 'must not be empty' }],
    });
    expect(await storedRunsOf(user.user.id)).toEqual([]);
  });
});

describe.each(TEST_DATABASES)('a detached run at server stop on %s', (kind) => {
  /** Starts a run that goes on until it is stopped, stops the server after its first steps, starts the next one. */
  async function stopMidRun(env: Record<string, string>) {
    const database = await createTestDatabase(kind, { persistent: true });
    const deployment = { AIRLOCK_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'), ...env };
    const first = await startTestApp(kind, { database, keepDatabase: true, env: deployment });
    let runId: string;
    try {
      const slow = await scriptedConfiguration(first, 'slow', { replies: [...toolRounds(12), { content: 'finished after the restart' }], delayMs: 100, maxIterations: 20, allowedToolGroups: ['structure'] });
      const run = member((await first.gql(START_RUN, { input: { configurationId: slow, prompt: 'until the server stops' } })).data?.startRun, 'Run');
      runId = Buffer.from(run.id, 'base64').toString('utf8').split(':')[1]!;
      await eventually(() => first.app.services.db.selectFrom('run_steps').select('sequence').where('run_id', '=', runId).execute(), (steps) => steps.length >= 2);
    } finally {
      await first.stop();
    }
    return { second: await startTestApp(kind, { database, env: deployment }), runId: runId! };
  }

  it('should be handed over at its next step boundary and finished by the next process, its steps continuing with no gap', async () => {
    const { second, runId } = await stopMidRun({ AIRLOCK_RUN_LEASE_MS: '1500' });
    try {
      const stored = await eventually(
        () => second.app.services.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow(),
        (run) => run.status !== 'RUNNING',
      );
      expect(stored).toMatchObject({ status: 'COMPLETED', termination_reason: 'COMPLETED', final_content: null, resume_count: 1, checkpoint: null, lease_owner: null });
      const steps = await second.app.services.db.selectFrom('run_steps').select(['sequence', 'kind', 'epoch']).where('run_id', '=', runId).orderBy('sequence').execute();
      expect(steps.map((step) => step.sequence)).toEqual(steps.map((_, index) => index + 1));
      // Written by two processes: epoch 1 until the handover, epoch 2 after it.
      expect(new Set(steps.map((step) => step.epoch))).toEqual(new Set([1, 2]));
      expect(steps.at(-1)).toMatchObject({ kind: 'LLM', epoch: 2 });
    } finally {
      await second.stop();
    }
  });

  it('should be interrupted like any run when runs are not resumed (AIRLOCK_RESUME_RUNS=false)', async () => {
    const { second, runId } = await stopMidRun({ AIRLOCK_RESUME_RUNS: 'false' });
    try {
      const stored = await second.app.services.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ status: 'FAILED', termination_reason: 'INTERRUPTED', resume_count: 0 });
    } finally {
      await second.stop();
    }
  });
});

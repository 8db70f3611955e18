import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { graphql } from '../gql/gql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { deploymentEnv, eventually, follow, oneToN, startInstance, toolRounds, type Instance } from '../helpers/instances.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.ts';
import { collect, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

const CREATE_ALICE = graphql(`
  mutation InstancesCreateAlice { createUser(input: { name: "alice" }) { __typename ... on CreateUserPayload { token user { id } } } }
`);
const START_RUN = graphql(`
  mutation InstancesStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const CANCEL_RUN = graphql(`
  mutation InstancesCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }
`);
const RUN_STATE = graphql(`
  query InstancesRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }
`);
const RUN_UPDATES = graphql(`
  subscription InstancesRunUpdates { runUpdates { snapshot run { id status } } }
`);
const APPROVAL_REQUESTS = graphql(`
  subscription InstancesApprovalRequests { approvalRequests { kind snapshot turnDigest run { id } } }
`);
const APPROVE = graphql(`
  mutation InstancesApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }
`);
const ENABLE_EDITING = graphql(`
  mutation InstancesEnableEditing($alice: ID!) {
    setToolEnabled(name: "update_record", enabled: true) { enabled }
    grantTable(userId: $alice, table: "customers", mode: WRITE) { __typename }
  }
`);
const DEACTIVATE = graphql(`
  mutation InstancesDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }
`);

const sequences = (events: readonly RunEvent[]) => stepsOf(events).map((step) => step.sequence);

/**
 * Two real server processes on one PostgreSQL database and one Redis (the machine's, under a
 * channel prefix of this file's own): what an operator gets behind a load balancer.
 */
describe.skipIf(!TEST_REDIS_URL || !process.env.TEST_DATABASE_URL)('two instances on one PostgreSQL and one Redis', () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  let admin: string;
  let alice: { id: string; token: string };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    // A long heartbeat: a cancel that arrives quickly came over Redis, not through the database.
    const deployment = deploymentEnv({ DATABASE_URL: database.databaseUrl!, REDIS_URL: TEST_REDIS_URL!, AIRLOCK_REDIS_PREFIX: uniquePrefix('two'), AIRLOCK_RUN_HEARTBEAT_MS: '60000' });
    admin = deployment.adminToken;
    a = await startInstance(deployment.env);
    b = await startInstance(deployment.env);
    const created = member((await a.gql(CREATE_ALICE)).data?.createUser, 'CreateUserPayload');
    alice = { id: created.user.id, token: created.token };
    const handle = await database.open();
    try {
      await seedRecords(handle.db);
    } finally {
      await handle.close();
    }
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('should stream a run driven by A to watchers on B: replay mid-run then live, verbatim for an admin and filtered for its non-admin owner; the runs list on B follows it', async () => {
    const configurationId = await scriptedConfiguration(a, 'watched', { replies: toolRounds(8, 'secret plan'), finalReply: { content: 'all done' }, delayMs: 120, maxIterations: 10, allowedToolGroups: ['structure'] });
    const onB = { admin: wsClient(b.url, admin), alice: wsClient(b.url, alice.token) };
    const initiator = wsClient(a.url, alice.token);
    try {
      const list = follow(onB.admin, RUN_UPDATES, {}, (data) => data.runUpdates as { snapshot: boolean; run: { id: string; status: string } });
      await list.until((events) => events.length >= 0, 'the list to open');
      await new Promise((resolve) => setTimeout(resolve, 200));
      let watchers: Promise<RunEvent[]>[] = [];
      let runId = '';
      const driven = await collect(initiator, RUN_AGENT, { input: { configurationId, prompt: 'think' } }, (event) => {
        if (event.__typename === 'RunStartedEvent') runId = event.run.id;
        // Joined mid-run: what is stored is replayed, the rest arrives live from A through Redis.
        if (event.__typename === 'RunStepEvent' && event.step.sequence === 3) {
          watchers = [collect(onB.admin, RUN_EVENTS, { runId }), collect(onB.alice, RUN_EVENTS, { runId })];
        }
      });
      const [asAdmin, asAlice] = await Promise.all(watchers);
      const stored = (await b.gql(RUN_STATE, { id: runId })).data!.run!;
      expect(stored.status).toBe('COMPLETED');
      for (const events of [driven, asAdmin!, asAlice!]) {
        expect(sequences(events)).toEqual(oneToN(stored.steps.edges.length));
        expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
      }
      const contents = (events: RunEvent[]) => stepsOf(events).filter((step) => step.kind === 'LLM').map((step) => step.content);
      expect(contents(asAdmin!)).toContain('secret plan 8');
      expect(contents(asAlice!).every((content) => content === null)).toBe(true);
      expect(contents(driven).every((content) => content === null)).toBe(true);

      await list.until((events) => events.some((event) => !event.snapshot && event.run.id === runId && event.run.status === 'COMPLETED'), 'the finished run on B’s list');
      expect(list.events.filter((event) => event.run.id === runId).map((event) => event.run.status)[0]).toBe('RUNNING');
      list.stop();
    } finally {
      await Promise.all([onB.admin.dispose(), onB.alice.dispose(), initiator.dispose()]);
    }
  }, 60_000);

  it('should cancel on B a run driven by A, at once (long before A’s next heartbeat)', async () => {
    const configurationId = await scriptedConfiguration(a, 'cancelled', { replies: toolRounds(40), delayMs: 150, maxIterations: 50, allowedToolGroups: ['structure'] });
    const started = member((await a.gql(START_RUN, { input: { configurationId, prompt: 'go on' } })).data?.startRun, 'Run');
    await eventually(() => b.gql(RUN_STATE, { id: started.id }), (result) => (result.data?.run?.steps.edges.length ?? 0) >= 2, 'two stored steps');
    const answer = member((await b.gql(CANCEL_RUN, { id: started.id })).data?.cancelRun, 'Run');
    expect(answer.id).toBe(started.id);
    const settled = await eventually(() => b.gql(RUN_STATE, { id: started.id }), (result) => result.data?.run?.status !== 'RUNNING', 'the cancelled run', 10_000);
    expect(settled.data!.run).toMatchObject({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
    expect(settled.data!.run!.steps.edges.length).toBeLessThan(40);
  }, 30_000);

  it('should resume on B a run suspended on A (one claim when A and B approve at once), with A’s watchers and B’s approvals feed following', async () => {
    await a.gql(ENABLE_EDITING, { alice: alice.id });
    const rename = (name: string) => ({ toolCalls: [{ name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: '3' }, changes: { name } } }] });
    const approvals = wsClient(b.url, admin);
    const aliceOnA = wsClient(a.url, alice.token);
    try {
      const feed = follow(approvals, APPROVAL_REQUESTS, {}, (data) => data.approvalRequests as { kind: string; turnDigest: string | null; run: { id: string } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (const [round, approvers] of [
        [1, [b]],
        [2, [a, b]],
      ] as const) {
        const configurationId = await scriptedConfiguration(a, `editor-${round}`, { replies: [rename(`Renamed ${round}`), { content: 'renamed' }], privacyLevel: 'FULL', allowedToolGroups: ['editing'] });
        const proposal = await collect(aliceOnA, RUN_AGENT, { input: { configurationId, prompt: 'rename' } });
        const suspended = member(proposal.at(-1), 'RunSuspendedEvent');
        await feed.until((events) => events.some((event) => event.kind === 'WAITING' && event.run.id === suspended.run.id), 'the waiting request on B');
        const watcher = collect(aliceOnA, RUN_EVENTS, { runId: suspended.run.id });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const answers = await Promise.all(approvers.map((instance) => instance.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest })));
        // One claim: the other instance finds the run no longer waiting (a conflict, or a stale digest if it read it after the claim).
        const kinds = answers.map((answer) => answer.data?.approveRun.__typename);
        expect(kinds.filter((kind) => kind === 'Run')).toHaveLength(1);
        expect(kinds.filter((kind) => kind !== 'Run').every((kind) => kind === 'ConflictError' || kind === 'StaleApprovalError')).toBe(true);
        const events = await watcher;
        expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED', finalContent: 'renamed' } });
        const tools = stepsOf(events).filter((step) => step.kind === 'TOOL');
        expect(tools.map((step) => step.toolName)).toEqual(['update_record']);
        expect(stepsOf(events).filter((step) => step.kind === 'APPROVAL')).toHaveLength(1);
        await feed.until((all) => all.some((event) => event.kind === 'DECIDED' && event.run.id === suspended.run.id), 'the decision on B’s feed');
      }
      feed.stop();
      const handle = await database.open();
      try {
        const row = await handle.db.selectFrom('records.customers' as never).select('name' as never).where('id' as never, '=', 3 as never).executeTakeFirstOrThrow();
        expect(row).toEqual({ name: 'Renamed 2' });
      } finally {
        await handle.close();
      }
    } finally {
      await Promise.all([approvals.dispose(), aliceOnA.dispose()]);
    }
  }, 60_000);

  it('should close on A the sessions and stop the runs of a user deactivated on B', async () => {
    const configurationId = await scriptedConfiguration(a, 'revoked', { replies: toolRounds(40), delayMs: 150, maxIterations: 50, allowedToolGroups: ['structure'] });
    const aliceOnA = wsClient(a.url, alice.token);
    let closeCode = 0;
    aliceOnA.on('closed', (event) => (closeCode = (event as { code: number }).code));
    try {
      const stream = follow(aliceOnA, RUN_AGENT, { input: { configurationId, prompt: 'go on' } }, (data) => data.runAgent as RunEvent);
      await stream.until((events) => stepsOf(events).length >= 2, 'two steps');
      const runId = member(stream.events[0], 'RunStartedEvent').run.id;
      expect(member((await b.gql(DEACTIVATE, { id: alice.id })).data?.setUserActive, 'User')).toBeTruthy();
      await stream.ended;
      await eventually(async () => closeCode, (code) => code === 4403, 'the 4403 close on A');
      const settled = await eventually(() => b.gql(RUN_STATE, { id: runId }), (result) => result.data?.run?.status !== 'RUNNING', 'the run to stop', 10_000);
      expect(settled.data!.run!.status).toBe('CANCELLED');
    } finally {
      await aliceOnA.dispose();
    }
  }, 30_000);
});

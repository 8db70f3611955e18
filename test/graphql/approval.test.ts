import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql, type DocumentType } from '../gql/gql.ts';
import type { CreateConfigurationInput } from '../gql/graphql.ts';
import { member } from '../helpers/documents.ts';
import { collect, CREATE_CONFIGURATION, CREATE_MODEL, CREATE_PROVIDER, lastEvent, RUN_AGENT, RUN_EVENTS, stepsOf, wsClient } from '../helpers/runs.ts';

const RENAME = (id: string, name: string) => ({ name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: id }, changes: { name } } });

const APPROVE = graphql(`
  mutation ApprovalApprove($id: ID!, $digest: String!, $approved: Boolean!) {
    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }
  }
`);
const SETTLED_RUN = graphql(`
  query ApprovalSettledRun($id: ID!) {
    run(id: $id) {
      status terminationReason iterations usage { totalTokens }
      steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } }
    }
  }
`);
const ENABLE_TOOL = graphql(`
  mutation ApprovalEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }
`);
const CREATE_USERS = graphql(`
  mutation ApprovalCreateUsers {
    a: createUser(input: { name: "alice" }) { __typename ... on CreateUserPayload { token user { id } } }
    b: createUser(input: { name: "bob" }) { __typename ... on CreateUserPayload { token user { id } } }
  }
`);
const GRANT_BOTH = graphql(`
  mutation ApprovalGrantBoth($a: ID!, $b: ID!) {
    x: grantTable(userId: $a, table: "customers", mode: WRITE) { __typename }
    y: grantTable(userId: $b, table: "customers", mode: READ) { __typename }
  }
`);
const GRANT_CUSTOMERS = graphql(`
  mutation ApprovalGrantCustomers($a: ID!, $mode: GrantMode!) { grantTable(userId: $a, table: "customers", mode: $mode) { __typename } }
`);
const MY_PENDING_APPROVALS = graphql(`
  query ApprovalMyPending { pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }
`);
const PENDING_DIGESTS = graphql(`
  query ApprovalPendingDigests { pendingApprovals { turnDigest } }
`);
const PENDING_RUNS = graphql(`
  query ApprovalPendingRuns { pendingApprovals { run { id } turnDigest } }
`);
const DISABLE_GROUP = graphql(`
  mutation ApprovalDisableGroup($name: String!) { setToolGroupEnabled(name: $name, enabled: false) { enabled } }
`);
const RESET_GROUP = graphql(`
  mutation ApprovalResetGroup($name: String!) { resetToolGroup(name: $name) { enabled } }
`);

type SettledRun = NonNullable<DocumentType<typeof SETTLED_RUN>['run']>;

describe.each(TEST_DATABASES)('human approval of write tools on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let modelId: string;
  let configurations = 0;

  const customerName = async (id: number) =>
    (await t.app.services.db.selectFrom('records.customers' as never).select('name' as never).where('id' as never, '=', id as never).executeTakeFirstOrThrow()) as { name: string };

  /** A SCRIPTED configuration offering the editing and structure groups. */
  async function configuration(replies: unknown[], extra: Partial<CreateConfigurationInput> = {}): Promise<string> {
    const name = `editor-${configurations++}`;
    const provider = await t.gql(CREATE_PROVIDER, {
      input: { name: `p-${name}`, kind: 'SCRIPTED', settings: { replies } },
    });
    const model = await t.gql(CREATE_MODEL, {
      input: { providerId: member(provider.data?.createProvider, 'Provider').id, name: `m-${name}`, providerModelId: 's', inputPricePerMTok: 1, outputPricePerMTok: 1 },
    });
    modelId = member(model.data?.createModel, 'Model').id;
    const created = await t.gql(CREATE_CONFIGURATION, {
      input: { name, modelId, privacyLevel: 'FULL', allowedToolGroups: ['editing', 'structure'], ...extra },
    });
    return member(created.data?.createConfiguration, 'Configuration').id;
  }

  /** Runs until the stream ends (suspension or finish); returns the events. */
  const propose = async (token: string, configurationId: string) => {
    const client = wsClient(url, token);
    try {
      return await collect(client, RUN_AGENT, { input: { configurationId, prompt: 'Rename customer 3' } });
    } finally {
      await client.dispose();
    }
  };

  async function waitUntilSettled(runId: string, options: { stillWaiting?: boolean } = {}): Promise<SettledRun> {
    const deadline = options.stillWaiting ? 0 : Date.now() + 10_000;
    for (;;) {
      const result = await t.gql(SETTLED_RUN, { id: runId });
      if (!result.data) throw new Error(JSON.stringify(result.errors));
      const run = result.data.run!;
      if (!['RUNNING', 'WAITING_FOR_APPROVAL'].includes(run.status) || Date.now() > deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    await t.gql(ENABLE_TOOL, { name: 'update_record' });
    const users = (await t.gql(CREATE_USERS)).data;
    const [a, b] = [member(users?.a, 'CreateUserPayload'), member(users?.b, 'CreateUserPayload')];
    alice = { token: a.token, id: a.user.id };
    bob = { token: b.token, id: b.user.id };
    await t.gql(GRANT_BOTH, { a: alice.id, b: bob.id });
  });
  afterAll(() => t.stop());

  it('should suspend before any call of the turn runs, with previews and a digest; a read call in the turn waits too', async () => {
    const before = await customerName(3);
    const id = await configuration([{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }, RENAME('3', 'Renamed Three')] }, { content: 'Done.' }]);
    const events = await propose(alice.token, id);
    expect(events.map((event) => event.__typename === 'RunStepEvent' ? event.step.kind : event.__typename)).toEqual(['RunStartedEvent', 'REQUEST', 'LLM', 'RunSuspendedEvent']);
    const suspended = lastEvent(events, 'RunSuspendedEvent');
    expect(suspended.run.status).toBe('WAITING_FOR_APPROVAL');
    expect(suspended.turnDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(suspended.pendingCalls.map((call) => call.name)).toEqual(['describe_tables', 'update_record']);
    expect(suspended.pendingCalls[0]!.preview).toBeNull();
    expect(suspended.pendingCalls[1]!.preview).toContain('Renamed Three');
    expect(await customerName(3)).toEqual(before);
    const stored = await t.app.services.db.selectFrom('runs').selectAll().where('status', '=', 'WAITING_FOR_APPROVAL').execute();
    const row = stored.find((candidate) => candidate.suspended_digest === suspended.turnDigest)!;
    expect(row.suspended_state!.startsWith('v1.')).toBe(true);
    expect(row.suspended_state).not.toContain('Renamed Three');
    const opened = t.app.services.runHost.suspendedState(row)!;
    expect(JSON.stringify(opened)).not.toMatch(/artifact/i);
    expect(opened.suspension.state.iterations).toBe(1);
  });

  it('should list pending approvals to the initiator and admins only', async () => {
    const mine = await t.gql(MY_PENDING_APPROVALS, {}, alice.token);
    expect(mine.data!.pendingApprovals.length).toBeGreaterThan(0);
    expect((await t.gql(PENDING_DIGESTS, {}, bob.token)).data!.pendingApprovals).toEqual([]);
    expect((await t.gql(PENDING_DIGESTS)).data!.pendingApprovals.length).toBeGreaterThanOrEqual(mine.data!.pendingApprovals.length);
  });

  it('should refuse a stale digest with a typed error and keep waiting', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('4', 'Never')] }, { content: 'Done.' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const stale = await t.gql(APPROVE, { id: suspended.run.id, digest: '0'.repeat(64), approved: true }, alice.token);
    expect(stale.data!.approveRun.__typename).toBe('StaleApprovalError');
    expect((await waitUntilSettled(suspended.run.id, { stillWaiting: true })).status).toBe('WAITING_FOR_APPROVAL');
  });

  it('should apply the update only after approval, storing the decision before the write', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('5', 'Approved Five')] }, { content: 'Renamed.' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    expect((await customerName(5)).name).not.toBe('Approved Five');
    const decided = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
    expect(decided.data!.approveRun).toMatchObject({ __typename: 'Run', status: 'RUNNING' });
    const run = await waitUntilSettled(suspended.run.id);
    expect(run).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', iterations: 2 });
    const steps = run.steps.edges.map((edge) => edge.node);
    expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM']);
    expect(steps[2]!.approval).toEqual({ approverName: 'alice', approved: true, turnDigest: suspended.turnDigest });
    expect(steps[3]!.toolResult).toContain('Approved Five');
    expect((await customerName(5)).name).toBe('Approved Five');
  });

  it('should let exactly one of two concurrent approvals win', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('6', 'Once')] }, { content: 'ok' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const [first, second] = await Promise.all([
      t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }),
      t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }),
    ]);
    const outcomes = [first.data!.approveRun.__typename, second.data!.approveRun.__typename].sort();
    expect(outcomes[1]).toBe('Run');
    expect(['ConflictError', 'StaleApprovalError']).toContain(outcomes[0]);
    const run = await waitUntilSettled(suspended.run.id);
    expect(run.steps.edges.filter((edge) => edge.node.kind === 'APPROVAL')).toHaveLength(1);
    expect(run.steps.edges.filter((edge) => edge.node.kind === 'TOOL')).toHaveLength(1);
  });

  it('should refuse an approver who could not run the write themselves', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('7', 'Nope')] }, { content: 'ok' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    await t.gql(GRANT_CUSTOMERS, { a: alice.id, mode: 'READ' });
    try {
      const refused = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
      expect(refused.data!.approveRun.__typename).toBe('ForbiddenError');
      const stranger = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, bob.token);
      expect(stranger.data!.approveRun.__typename).toBe('NotFoundError');
      expect((await waitUntilSettled(suspended.run.id, { stillWaiting: true })).status).toBe('WAITING_FOR_APPROVAL');
      expect((await customerName(7)).name).not.toBe('Nope');
    } finally {
      await t.gql(GRANT_CUSTOMERS, { a: alice.id, mode: 'WRITE' });
    }
  });

  it('should inject the denial for every call of the turn, change nothing, and end the run APPROVAL_DENIED with the decision stored', async () => {
    const id = await configuration([{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }, RENAME('8', 'Denied')] }, { content: 'Understood.' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const denied = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: false }, alice.token);
    expect(denied.data!.approveRun.__typename).toBe('Run');
    const run = await waitUntilSettled(suspended.run.id);
    // The model answered around the denial, so the run completed; its reason says a person said no.
    expect(run).toMatchObject({ status: 'COMPLETED', terminationReason: 'APPROVAL_DENIED' });
    const decisions = run.steps.edges.map((edge) => edge.node).filter((step) => step.kind === 'APPROVAL');
    expect(decisions.map((step) => ({ approved: step.approval!.approved, turnDigest: step.approval!.turnDigest }))).toEqual([
      { approved: false, turnDigest: suspended.turnDigest },
    ]);
    const results = run.steps.edges.map((edge) => edge.node).filter((step) => step.kind === 'TOOL').map((step) => step.toolResult);
    expect(results).toEqual(['Error: tool "describe_tables" was denied by the operator.', 'Error: tool "update_record" was denied by the operator.']);
    expect((await customerName(8)).name).not.toBe('Denied');
  });

  it('should refuse a write whose tool was disabled while waiting', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('9', 'Disabled')] }, { content: 'ok' }]);
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    await t.gql(DISABLE_GROUP, { name: 'editing' });
    try {
      await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true });
      const run = await waitUntilSettled(suspended.run.id);
      const tool = run.steps.edges.map((edge) => edge.node).find((step) => step.kind === 'TOOL');
      expect(tool!.toolResult).toBe('Error: tool "update_record" is no longer permitted and was not executed.');
      expect((await customerName(9)).name).not.toBe('Disabled');
    } finally {
      await t.gql(RESET_GROUP, { name: 'editing' });
    }
  });

  it('should suspend again in the same run, carrying iterations and usage over', async () => {
    const id = await configuration([
      { content: '', toolCalls: [RENAME('10', 'Ten A')] },
      { content: '', toolCalls: [RENAME('10', 'Ten B')] },
      { content: 'Both done.' },
    ]);
    const first = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const watcher = wsClient(url, alice.token);
    try {
      let joined!: () => void;
      const replayed = new Promise<void>((resolve) => (joined = resolve));
      const following = collect(watcher, RUN_EVENTS, { runId: first.run.id }, (event) => event.__typename === 'RunSuspendedEvent' && joined());
      await replayed;
      await t.gql(APPROVE, { id: first.run.id, digest: first.turnDigest, approved: true }, alice.token);
      let second: DocumentType<typeof PENDING_RUNS>['pendingApprovals'][number] | undefined;
      for (let attempt = 0; attempt < 200 && !second; attempt++) {
        const pending = await t.gql(PENDING_RUNS, {}, alice.token);
        second = pending.data!.pendingApprovals.find((entry) => entry.run.id === first.run.id && entry.turnDigest !== first.turnDigest);
        if (!second) await new Promise((resolve) => setTimeout(resolve, 30));
      }
      expect(second).toBeDefined();
      expect((await customerName(10)).name).toBe('Ten A');
      await t.gql(APPROVE, { id: first.run.id, digest: second!.turnDigest, approved: true }, alice.token);
      const run = await waitUntilSettled(first.run.id);
      expect(run).toMatchObject({ status: 'COMPLETED', iterations: 3 });
      expect(run.steps.edges.map((edge) => edge.node.kind)).toEqual(['REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM']);
      expect(run.steps.edges.map((edge) => edge.node.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await customerName(10)).name).toBe('Ten B');
      const events = await following;
      const kinds = events.map((event) => (event.__typename === 'RunStepEvent' ? event.step.kind : event.__typename));
      expect(kinds[0]).toBe('RunStartedEvent');
      expect(kinds.filter((kind) => kind === 'RunSuspendedEvent')).toHaveLength(2);
      expect(kinds.at(-1)).toBe('RunFinishedEvent');
      expect(stepsOf(events).map((step) => step.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await watcher.dispose();
    }
  });

  it('should let the initiator deny but not approve when a second approver is required', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('11', 'Four Eyes')] }, { content: 'ok' }], { requireSecondApprover: true });
    const suspended = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const own = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
    expect(own.data!.approveRun.__typename).toBe('ForbiddenError');
    const admin = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true });
    expect(admin.data!.approveRun.__typename).toBe('Run');
    await waitUntilSettled(suspended.run.id);
    expect((await customerName(11)).name).toBe('Four Eyes');
    const again = lastEvent(await propose(alice.token, id), 'RunSuspendedEvent');
    const deny = await t.gql(APPROVE, { id: again.run.id, digest: again.turnDigest, approved: false }, alice.token);
    expect(deny.data!.approveRun.__typename).toBe('Run');
  });
});

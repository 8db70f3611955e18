import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { collect, RUN_AGENT, RUN_EVENTS, wsClient } from '../helpers/runs.ts';

const RENAME = (id: string, name: string) => ({ name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: id }, changes: { name } } });

const APPROVE = `mutation($id: ID!, $digest: String!, $approved: Boolean!) {
  approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }
}`;

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
  async function configuration(replies: unknown[], extra: Record<string, unknown> = {}): Promise<string> {
    const name = `editor-${configurations++}`;
    const provider = await t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ... on Provider { id } } }`, {
      input: { name: `p-${name}`, kind: 'SCRIPTED', settings: { replies } },
    });
    const model = await t.gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
      input: { providerId: provider.data.createProvider.id, name: `m-${name}`, providerModelId: 's', inputPricePerMTok: 1, outputPricePerMTok: 1 },
    });
    modelId = model.data.createModel.id;
    const created = await t.gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } } }`, {
      input: { name, modelId, privacyLevel: 'FULL', allowedToolGroups: ['editing', 'structure'], ...extra },
    });
    return created.data.createConfiguration.id;
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

  async function waitUntilSettled(runId: string, options: { stillWaiting?: boolean } = {}): Promise<any> {
    const deadline = options.stillWaiting ? 0 : Date.now() + 10_000;
    for (;;) {
      const result = await t.gql(`query($id: ID!) { run(id: $id) { status terminationReason iterations usage { totalTokens }
        steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } } } }`, { id: runId });
      if (!result.data) throw new Error(JSON.stringify(result.errors));
      const run = result.data.run;
      if (!['RUNNING', 'WAITING_FOR_APPROVAL'].includes(run.status) || Date.now() > deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    await t.gql(`mutation { setToolEnabled(name: "update_record", enabled: true) { enabled } }`);
    const users = await t.gql(`mutation {
      a: createUser(input: { name: "alice" }) { ... on CreateUserPayload { token user { id } } }
      b: createUser(input: { name: "bob" }) { ... on CreateUserPayload { token user { id } } }
    }`);
    alice = { token: users.data.a.token, id: users.data.a.user.id };
    bob = { token: users.data.b.token, id: users.data.b.user.id };
    await t.gql(`mutation($a: ID!, $b: ID!) {
      x: grantTable(userId: $a, table: "customers", mode: WRITE) { __typename }
      y: grantTable(userId: $b, table: "customers", mode: READ) { __typename }
    }`, { a: alice.id, b: bob.id });
  });
  afterAll(() => t.stop());

  it('should suspend before any call of the turn runs, with previews and a digest; a read call in the turn waits too', async () => {
    const before = await customerName(3);
    const id = await configuration([{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }, RENAME('3', 'Renamed Three')] }, { content: 'Done.' }]);
    const events = await propose(alice.token, id);
    expect(events.map((event) => event.__typename === 'RunStepEvent' ? event.step.kind : event.__typename)).toEqual(['RunStartedEvent', 'REQUEST', 'LLM', 'RunSuspendedEvent']);
    const suspended = events.at(-1);
    expect(suspended.run.status).toBe('WAITING_FOR_APPROVAL');
    expect(suspended.turnDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(suspended.pendingCalls.map((call: any) => call.name)).toEqual(['describe_tables', 'update_record']);
    expect(suspended.pendingCalls[0].preview).toBeNull();
    expect(suspended.pendingCalls[1].preview).toContain('Renamed Three');
    expect(await customerName(3)).toEqual(before);
    const stored = await t.app.services.db.selectFrom('runs').selectAll().where('status', '=', 'WAITING_FOR_APPROVAL').execute();
    const row = stored.find((candidate) => candidate.suspended_digest === suspended.turnDigest)!;
    expect(row.suspended_state!.startsWith('v1.')).toBe(true);
    expect(row.suspended_state).not.toContain('Renamed Three');
    const opened = t.app.services.runs.suspendedState(row)!;
    expect(JSON.stringify(opened)).not.toMatch(/artifact/i);
    expect(opened.suspension.state.iterations).toBe(1);
  });

  it('should list pending approvals to the initiator and admins only', async () => {
    const mine = await t.gql(`{ pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }`, {}, alice.token);
    expect(mine.data.pendingApprovals.length).toBeGreaterThan(0);
    expect((await t.gql(`{ pendingApprovals { turnDigest } }`, {}, bob.token)).data.pendingApprovals).toEqual([]);
    expect((await t.gql(`{ pendingApprovals { turnDigest } }`)).data.pendingApprovals.length).toBeGreaterThanOrEqual(mine.data.pendingApprovals.length);
  });

  it('should refuse a stale digest with a typed error and keep waiting', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('4', 'Never')] }, { content: 'Done.' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    const stale = await t.gql(APPROVE, { id: suspended.run.id, digest: '0'.repeat(64), approved: true }, alice.token);
    expect(stale.data.approveRun.__typename).toBe('StaleApprovalError');
    expect((await waitUntilSettled(suspended.run.id, { stillWaiting: true })).status).toBe('WAITING_FOR_APPROVAL');
  });

  it('should apply the update only after approval, storing the decision before the write', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('5', 'Approved Five')] }, { content: 'Renamed.' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    expect((await customerName(5)).name).not.toBe('Approved Five');
    const decided = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
    expect(decided.data.approveRun).toMatchObject({ __typename: 'Run', status: 'RUNNING' });
    const run = await waitUntilSettled(suspended.run.id);
    expect(run).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', iterations: 2 });
    const steps = run.steps.edges.map((edge: any) => edge.node);
    expect(steps.map((step: any) => step.kind)).toEqual(['REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM']);
    expect(steps[2].approval).toEqual({ approverName: 'alice', approved: true, turnDigest: suspended.turnDigest });
    expect(steps[3].toolResult).toContain('Approved Five');
    expect((await customerName(5)).name).toBe('Approved Five');
  });

  it('should let exactly one of two concurrent approvals win', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('6', 'Once')] }, { content: 'ok' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    const [first, second] = await Promise.all([
      t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }),
      t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }),
    ]);
    const outcomes = [first.data.approveRun.__typename, second.data.approveRun.__typename].sort();
    expect(outcomes[1]).toBe('Run');
    expect(['ConflictError', 'StaleApprovalError']).toContain(outcomes[0]);
    const run = await waitUntilSettled(suspended.run.id);
    expect(run.steps.edges.filter((edge: any) => edge.node.kind === 'APPROVAL')).toHaveLength(1);
    expect(run.steps.edges.filter((edge: any) => edge.node.kind === 'TOOL')).toHaveLength(1);
  });

  it('should refuse an approver who could not run the write themselves', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('7', 'Nope')] }, { content: 'ok' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    await t.gql(`mutation($a: ID!) { grantTable(userId: $a, table: "customers", mode: READ) { __typename } }`, { a: alice.id });
    try {
      const refused = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
      expect(refused.data.approveRun.__typename).toBe('ForbiddenError');
      const stranger = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, bob.token);
      expect(stranger.data.approveRun.__typename).toBe('NotFoundError');
      expect((await waitUntilSettled(suspended.run.id, { stillWaiting: true })).status).toBe('WAITING_FOR_APPROVAL');
      expect((await customerName(7)).name).not.toBe('Nope');
    } finally {
      await t.gql(`mutation($a: ID!) { grantTable(userId: $a, table: "customers", mode: WRITE) { __typename } }`, { a: alice.id });
    }
  });

  it('should inject the denial for every call of the turn and change nothing', async () => {
    const id = await configuration([{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }, RENAME('8', 'Denied')] }, { content: 'Understood.' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    const denied = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: false }, alice.token);
    expect(denied.data.approveRun.__typename).toBe('Run');
    const run = await waitUntilSettled(suspended.run.id);
    expect(run.status).toBe('COMPLETED');
    const results = run.steps.edges.map((edge: any) => edge.node).filter((step: any) => step.kind === 'TOOL').map((step: any) => step.toolResult);
    expect(results).toEqual(['Error: tool "describe_tables" was denied by the operator.', 'Error: tool "update_record" was denied by the operator.']);
    expect((await customerName(8)).name).not.toBe('Denied');
  });

  it('should refuse a write whose tool was disabled while waiting', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('9', 'Disabled')] }, { content: 'ok' }]);
    const suspended = (await propose(alice.token, id)).at(-1);
    await t.gql(`mutation { setToolGroupEnabled(name: "editing", enabled: false) { enabled } }`);
    try {
      await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true });
      const run = await waitUntilSettled(suspended.run.id);
      const tool = run.steps.edges.map((edge: any) => edge.node).find((step: any) => step.kind === 'TOOL');
      expect(tool.toolResult).toBe('Error: tool "update_record" is no longer permitted and was not executed.');
      expect((await customerName(9)).name).not.toBe('Disabled');
    } finally {
      await t.gql(`mutation { resetToolGroup(name: "editing") { enabled } }`);
    }
  });

  it('should suspend again in the same run, carrying iterations and usage over', async () => {
    const id = await configuration([
      { content: '', toolCalls: [RENAME('10', 'Ten A')] },
      { content: '', toolCalls: [RENAME('10', 'Ten B')] },
      { content: 'Both done.' },
    ]);
    const first = (await propose(alice.token, id)).at(-1);
    const watcher = wsClient(url, alice.token);
    try {
      let joined!: () => void;
      const replayed = new Promise<void>((resolve) => (joined = resolve));
      const following = collect(watcher, RUN_EVENTS, { runId: first.run.id }, (event) => event.__typename === 'RunSuspendedEvent' && joined());
      await replayed;
      await t.gql(APPROVE, { id: first.run.id, digest: first.turnDigest, approved: true }, alice.token);
      let second: any;
      for (let attempt = 0; attempt < 200 && !second; attempt++) {
        const pending = await t.gql(`{ pendingApprovals { run { id } turnDigest } }`, {}, alice.token);
        second = pending.data.pendingApprovals.find((entry: any) => entry.run.id === first.run.id && entry.turnDigest !== first.turnDigest);
        if (!second) await new Promise((resolve) => setTimeout(resolve, 30));
      }
      expect(second).toBeDefined();
      expect((await customerName(10)).name).toBe('Ten A');
      await t.gql(APPROVE, { id: first.run.id, digest: second.turnDigest, approved: true }, alice.token);
      const run = await waitUntilSettled(first.run.id);
      expect(run).toMatchObject({ status: 'COMPLETED', iterations: 3 });
      expect(run.steps.edges.map((edge: any) => edge.node.kind)).toEqual(['REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM', 'APPROVAL', 'TOOL', 'REQUEST', 'LLM']);
      expect(run.steps.edges.map((edge: any) => edge.node.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await customerName(10)).name).toBe('Ten B');
      const events = await following;
      const kinds = events.map((event) => (event.__typename === 'RunStepEvent' ? event.step.kind : event.__typename));
      expect(kinds[0]).toBe('RunStartedEvent');
      expect(kinds.filter((kind) => kind === 'RunSuspendedEvent')).toHaveLength(2);
      expect(kinds.at(-1)).toBe('RunFinishedEvent');
      expect(events.filter((event) => event.step).map((event) => event.step.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await watcher.dispose();
    }
  });

  it('should let the initiator deny but not approve when a second approver is required', async () => {
    const id = await configuration([{ content: '', toolCalls: [RENAME('11', 'Four Eyes')] }, { content: 'ok' }], { requireSecondApprover: true });
    const suspended = (await propose(alice.token, id)).at(-1);
    const own = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true }, alice.token);
    expect(own.data.approveRun.__typename).toBe('ForbiddenError');
    const admin = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest, approved: true });
    expect(admin.data.approveRun.__typename).toBe('Run');
    await waitUntilSettled(suspended.run.id);
    expect((await customerName(11)).name).toBe('Four Eyes');
    const again = (await propose(alice.token, id)).at(-1);
    const deny = await t.gql(APPROVE, { id: again.run.id, digest: again.turnDigest, approved: false }, alice.token);
    expect(deny.data.approveRun.__typename).toBe('Run');
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { collect, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, sseEvents, wsClient } from '../helpers/runs.ts';

const SECRET_IN_RESULT = 'alice@example.com';

const TOOL_THEN_ANSWER = [
  { content: 'Looking.', toolCalls: [{ name: 'read_records', arguments: { table: 'customers', limit: 2 } }] },
  { content: `Found them; contact ${SECRET_IN_RESULT} with key sk-proj-abcdefghijklmnopqrstuvwx.` },
];

const kinds = (events: any[]) =>
  events.map((event) => (event.__typename === 'RunStepEvent' ? `${event.__typename}:${event.step.kind}` : event.__typename));

describe.each(TEST_DATABASES)('runAgent on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let userToken: string;
  let userId: string;
  const configurations: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    const user = await t.gql(`mutation { createUser(input: { name: "dash" }) { ... on CreateUserPayload { token user { id } } } }`);
    userToken = user.data.createUser.token;
    userId = user.data.createUser.user.id;
    await t.gql(`mutation($id: ID!) { grantTable(userId: $id, table: "customers") { __typename } }`, { id: userId });
    for (const level of ['NONE', 'METADATA', 'REDACTED', 'FULL']) {
      configurations[level] = await scriptedConfiguration(t, `level-${level}`, { replies: TOOL_THEN_ANSWER, privacyLevel: level });
    }
  });
  afterAll(() => t.stop());

  it('should stream started, each step as it happens, then exactly one finished event', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: configurations.FULL, prompt: 'Who are our customers?' } });
      expect(kinds(events)).toEqual([
        'RunStartedEvent',
        'RunStepEvent:REQUEST',
        'RunStepEvent:LLM',
        'RunStepEvent:TOOL',
        'RunStepEvent:REQUEST',
        'RunStepEvent:LLM',
        'RunFinishedEvent',
      ]);
      expect(events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(events[0].run.status).toBe('RUNNING');
      expect(events.at(-1).run).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', truncated: false, iterations: 2 });
      expect(events.at(-1).run.usage.totalTokens).toBeGreaterThan(0);
      const tool = events.find((event) => event.step?.kind === 'TOOL').step;
      expect(tool.toolName).toBe('read_records');
      expect(tool.artifacts[0]).toMatchObject({ __typename: 'TableArtifact', columns: expect.arrayContaining(['email']) });
    } finally {
      await client.dispose();
    }
  });

  it('should stream the same events over server-sent events', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: RUN_AGENT, variables: { input: { configurationId: configurations.FULL, prompt: 'Who?' } } }),
    });
    const text = await response.text();
    const events = sseEvents(text, 'runAgent');
    expect(kinds(events)).toEqual(['RunStartedEvent', 'RunStepEvent:REQUEST', 'RunStepEvent:LLM', 'RunStepEvent:TOOL', 'RunStepEvent:REQUEST', 'RunStepEvent:LLM', 'RunFinishedEvent']);
    expect(text).toContain('event: complete');
  });

  it('should give a non-admin the filtered live steps but always the final answer of their own run', async () => {
    const client = wsClient(url, userToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: configurations.METADATA, prompt: 'Who?' } });
      const steps = events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step);
      expect(steps.length).toBe(5);
      for (const step of steps) {
        expect(step.contentRedacted).toBe(true);
        expect(step.content).toBeNull();
        expect(step.toolResult).toBeNull();
        expect(step.artifacts).toBeNull();
      }
      expect(steps.find((step: any) => step.kind === 'TOOL')).toMatchObject({ toolName: 'read_records', toolArtifactsCount: 1, toolArtifactTypes: ['table'] });
      expect(steps.find((step: any) => step.kind === 'LLM')).toMatchObject({ requestedToolNames: ['read_records'] });
      const finished = events.at(-1).run;
      expect(finished.finalContent).toContain(SECRET_IN_RESULT);
      const stored = await t.gql(`query($id: ID!) { run(id: $id) { finalContent prompt } }`, { id: finished.id }, userToken);
      expect(stored.data.run).toEqual({ finalContent: null, prompt: null });
    } finally {
      await client.dispose();
    }
  });

  it.each([
    ['NONE', { content: false, redacted: true, prompt: false }],
    ['METADATA', { content: false, redacted: true, prompt: false }],
    ['REDACTED', { content: true, redacted: true, prompt: true }],
    ['FULL', { content: true, redacted: false, prompt: true }],
  ])('should persist the %s copy while the admin live stream stays verbatim', async (level, expected) => {
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: configurations[level], prompt: `Prompt at ${level} from ${SECRET_IN_RESULT}` } });
      const liveFinal = events.at(-1).run;
      expect(liveFinal.finalContent).toContain(SECRET_IN_RESULT);
      const liveLlm = events.filter((event) => event.step?.kind === 'LLM').at(-1).step;
      expect(liveLlm.content).toContain(SECRET_IN_RESULT);
      const stored = await t.gql(
        `query($id: ID!) { run(id: $id) { privacyLevel prompt finalContent steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } } } }`,
        { id: liveFinal.id },
      );
      const run = stored.data.run;
      expect(run.privacyLevel).toBe(level);
      const storedLlm = run.steps.edges.map((edge: any) => edge.node).filter((node: any) => node.kind === 'LLM').at(-1);
      expect(storedLlm.contentRedacted).toBe(expected.redacted);
      expect(storedLlm.contentLength).toBe(liveLlm.contentLength);
      if (!expected.content) {
        expect(storedLlm.content).toBeNull();
        expect(run.finalContent).toBeNull();
      } else if (level === 'REDACTED') {
        expect(storedLlm.content).not.toContain(SECRET_IN_RESULT);
        expect(storedLlm.content).toContain('***');
        expect(storedLlm.content).not.toContain('sk-proj-abcdefghijklmnopqrstuvwx');
        expect(run.finalContent).not.toContain(SECRET_IN_RESULT);
      } else {
        expect(storedLlm.content).toContain(SECRET_IN_RESULT);
        expect(run.finalContent).toContain(SECRET_IN_RESULT);
      }
      expect(run.prompt === null).toBe(!expected.prompt);
      if (level === 'REDACTED') expect(run.prompt).not.toContain(SECRET_IN_RESULT);
      const rows = await sql<{ payload: unknown }>`select payload from run_steps where run_id = ${decodeRunId(liveFinal.id)}`.execute(t.app.services.db);
      const dump = JSON.stringify(rows.rows);
      expect(dump.includes(SECRET_IN_RESULT)).toBe(level === 'FULL');
    } finally {
      await client.dispose();
    }
  });

  it('should serve an artifact of an unknown shape as UnknownArtifact, never an error', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: configurations.FULL, prompt: 'Who?' } });
      const runId = decodeRunId(events.at(-1).run.id);
      const row = await t.app.services.db.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('kind', '=', 'TOOL').executeTakeFirstOrThrow();
      const payload = { ...(row.payload as object), toolArtifacts: [{ type: 'chart', label: 'Sales', data: { points: [1, 2] } }, { type: '***', label: '***', data: { text: 'x' } }] };
      await t.app.services.db.updateTable('run_steps').set({ payload: JSON.stringify(payload) }).where('run_id', '=', runId).where('sequence', '=', row.sequence).execute();
      const stored = await t.gql(`query($id: ID!) { run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } } }`, { id: events.at(-1).run.id });
      expect(stored.errors).toBeUndefined();
      const artifacts = stored.data.run.steps.edges.map((edge: any) => edge.node.artifacts).find((list: any) => list?.length);
      expect(artifacts).toEqual([
        { __typename: 'UnknownArtifact', type: 'chart', label: 'Sales', data: { points: [1, 2] } },
        { __typename: 'UnknownArtifact', type: '***', label: '***', data: { text: 'x' } },
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('should list runs newest first, only their own for a non-admin, filtered by status', async () => {
    const mine = await t.gql(`{ runs(first: 100) { edges { node { user { id } status } } } }`, {}, userToken);
    expect(mine.data.runs.edges.length).toBeGreaterThan(0);
    for (const edge of mine.data.runs.edges) expect(edge.node.user.id).toBe(userId);
    const all = await t.gql(`{ runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }`);
    expect(all.data.runs.edges).toHaveLength(2);
    expect(all.data.runs.pageInfo.hasNextPage).toBe(true);
    const next = await t.gql(`query($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }`, { after: all.data.runs.pageInfo.endCursor });
    const firstIds = all.data.runs.edges.map((edge: any) => edge.node.id);
    for (const edge of next.data.runs.edges) expect(firstIds).not.toContain(edge.node.id);
    expect(new Date(all.data.runs.edges[0].node.createdAt) >= new Date(all.data.runs.edges[1].node.createdAt)).toBe(true);
    const completed = await t.gql(`{ runs(first: 100, status: COMPLETED) { edges { node { status } } } }`);
    expect(new Set(completed.data.runs.edges.map((edge: any) => edge.node.status))).toEqual(new Set(['COMPLETED']));
    const adminRun = all.data.runs.edges.find((edge: any) => true)!.node.id;
    const other = await t.gql(`query($id: ID!) { run(id: $id) { id } }`, { id: adminRun }, userToken);
    const owner = await t.gql(`query($id: ID!) { run(id: $id) { user { name } } }`, { id: adminRun });
    if (owner.data.run.user.name !== 'dash') expect(other.data.run).toBeNull();
  });

  it('should replay a stored run through runEvents and complete', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const live = await collect(client, RUN_AGENT, { input: { configurationId: configurations.FULL, prompt: 'Who?' } });
      const replayed = await collect(client, RUN_EVENTS, { runId: live.at(-1).run.id });
      expect(kinds(replayed)).toEqual(kinds(live));
      expect(replayed.filter((event) => event.step).map((event) => event.step.sequence)).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await client.dispose();
    }
  });
});

function decodeRunId(globalId: string): string {
  return Buffer.from(globalId, 'base64').toString('utf8').split(':')[1]!;
}

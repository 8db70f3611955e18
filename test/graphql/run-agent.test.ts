import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../gql/gql.ts';
import type { PrivacyLevel } from '../gql/graphql.ts';
import { member, textOf } from '../helpers/documents.ts';
import { collect, lastEvent, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, sseEvents, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

const SECRET_IN_RESULT = 'alice@example.com';

const TOOL_THEN_ANSWER = [
  { content: 'Looking.', toolCalls: [{ name: 'read_records', arguments: { table: 'customers', limit: 2 } }] },
  { content: `Found them; contact ${SECRET_IN_RESULT} with key sk-proj-abcdefghijklmnopqrstuvwx.` },
];

const kinds = (events: RunEvent[]) =>
  events.map((event) => (event.__typename === 'RunStepEvent' ? `${event.__typename}:${event.step.kind}` : event.__typename));

const CREATE_USER = graphql(`
  mutation RunAgentCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }
`);
const GRANT_TABLE = graphql(`
  mutation RunAgentGrantTable($id: ID!, $table: String!) { grantTable(userId: $id, table: $table) { __typename } }
`);
const RUN_AS_OWNER_SEES_IT = graphql(`
  query RunAgentOwnersView($id: ID!) { run(id: $id) { finalContent prompt } }
`);
const STORED_RUN = graphql(`
  query RunAgentStoredRun($id: ID!) {
    run(id: $id) {
      privacyLevel prompt finalContent
      steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } }
    }
  }
`);
const STORED_ARTIFACTS = graphql(`
  query RunAgentStoredArtifacts($id: ID!) {
    run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } }
  }
`);
const RUN_OWNERS = graphql(`
  query RunAgentRunOwners { runs(first: 100) { edges { node { user { id } status } } } }
`);
const FIRST_RUNS = graphql(`
  query RunAgentFirstRuns { runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }
`);
const NEXT_RUNS = graphql(`
  query RunAgentNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }
`);
const COMPLETED_RUNS = graphql(`
  query RunAgentCompletedRuns { runs(first: 100, status: COMPLETED) { edges { node { status } } } }
`);
const RUN_ID = graphql(`
  query RunAgentRunId($id: ID!) { run(id: $id) { id } }
`);
const RUN_OWNER_NAME = graphql(`
  query RunAgentRunOwnerName($id: ID!) { run(id: $id) { user { name } } }
`);

describe.each(TEST_DATABASES)('runAgent on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let userToken: string;
  let userId: string;
  const configurations = {} as Record<PrivacyLevel, string>;

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    const user = member((await t.gql(CREATE_USER, { name: 'dash' })).data?.createUser, 'CreateUserPayload');
    userToken = user.token;
    userId = user.user.id;
    await t.gql(GRANT_TABLE, { id: userId, table: 'customers' });
    for (const level of ['NONE', 'METADATA', 'REDACTED', 'FULL'] as const) {
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
      expect(stepsOf(events).map((step) => step.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(member(events[0], 'RunStartedEvent').run.status).toBe('RUNNING');
      const finished = lastEvent(events, 'RunFinishedEvent');
      expect(finished.run).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', truncated: false, iterations: 2 });
      expect(finished.run.usage.totalTokens).toBeGreaterThan(0);
      const tool = stepsOf(events).find((step) => step.kind === 'TOOL')!;
      expect(tool.toolName).toBe('read_records');
      expect(tool.artifacts![0]).toMatchObject({ __typename: 'TableArtifact', columns: expect.arrayContaining(['email']) });
    } finally {
      await client.dispose();
    }
  });

  it('should stream the same events over server-sent events', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId: configurations.FULL, prompt: 'Who?' } } }),
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
      const steps = stepsOf(events);
      expect(steps.length).toBe(5);
      for (const step of steps) {
        expect(step.contentRedacted).toBe(true);
        expect(step.content).toBeNull();
        expect(step.toolResult).toBeNull();
        expect(step.artifacts).toBeNull();
      }
      expect(steps.find((step) => step.kind === 'TOOL')).toMatchObject({ toolName: 'read_records', toolArtifactsCount: 1, toolArtifactTypes: ['table'] });
      expect(steps.find((step) => step.kind === 'LLM')).toMatchObject({ requestedToolNames: ['read_records'] });
      const finished = lastEvent(events, 'RunFinishedEvent').run;
      expect(finished.finalContent).toContain(SECRET_IN_RESULT);
      const stored = await t.gql(RUN_AS_OWNER_SEES_IT, { id: finished.id }, userToken);
      expect(stored.data?.run).toEqual({ finalContent: null, prompt: null });
    } finally {
      await client.dispose();
    }
  });

  it.each([
    ['NONE', { content: false, redacted: true, prompt: false }],
    ['METADATA', { content: false, redacted: true, prompt: false }],
    ['REDACTED', { content: true, redacted: true, prompt: true }],
    ['FULL', { content: true, redacted: false, prompt: true }],
  ] as const)('should persist the %s copy while the admin live stream stays verbatim', async (level, expected) => {
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: configurations[level], prompt: `Prompt at ${level} from ${SECRET_IN_RESULT}` } });
      const liveFinal = lastEvent(events, 'RunFinishedEvent').run;
      expect(liveFinal.finalContent).toContain(SECRET_IN_RESULT);
      const liveLlm = stepsOf(events).filter((step) => step.kind === 'LLM').at(-1)!;
      expect(liveLlm.content).toContain(SECRET_IN_RESULT);
      const stored = await t.gql(STORED_RUN, { id: liveFinal.id });
      const run = stored.data!.run!;
      expect(run.privacyLevel).toBe(level);
      const storedLlm = run.steps.edges.map((edge) => edge.node).filter((node) => node.kind === 'LLM').at(-1)!;
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
      const finished = lastEvent(events, 'RunFinishedEvent');
      const runId = decodeRunId(finished.run.id);
      const row = await t.app.services.db.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('kind', '=', 'TOOL').executeTakeFirstOrThrow();
      const payload = { ...(row.payload as object), toolArtifacts: [{ type: 'chart', label: 'Sales', data: { points: [1, 2] } }, { type: '***', label: '***', data: { text: 'x' } }] };
      await t.app.services.db.updateTable('run_steps').set({ payload: JSON.stringify(payload) }).where('run_id', '=', runId).where('sequence', '=', row.sequence).execute();
      const stored = await t.gql(STORED_ARTIFACTS, { id: finished.run.id });
      expect(stored.errors).toBeUndefined();
      const artifacts = stored.data!.run!.steps.edges.map((edge) => edge.node.artifacts).find((list) => list?.length);
      expect(artifacts).toEqual([
        { __typename: 'UnknownArtifact', type: 'chart', label: 'Sales', data: { points: [1, 2] } },
        { __typename: 'UnknownArtifact', type: '***', label: '***', data: { text: 'x' } },
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('should list runs newest first, only their own for a non-admin, filtered by status', async () => {
    const mine = (await t.gql(RUN_OWNERS, {}, userToken)).data!;
    expect(mine.runs.edges.length).toBeGreaterThan(0);
    for (const edge of mine.runs.edges) expect(edge.node.user!.id).toBe(userId);
    const all = (await t.gql(FIRST_RUNS)).data!;
    expect(all.runs.edges).toHaveLength(2);
    expect(all.runs.pageInfo.hasNextPage).toBe(true);
    const next = (await t.gql(NEXT_RUNS, { after: all.runs.pageInfo.endCursor })).data!;
    const firstIds = all.runs.edges.map((edge) => edge.node.id);
    for (const edge of next.runs.edges) expect(firstIds).not.toContain(edge.node.id);
    expect(new Date(all.runs.edges[0]!.node.createdAt) >= new Date(all.runs.edges[1]!.node.createdAt)).toBe(true);
    const completed = (await t.gql(COMPLETED_RUNS)).data!;
    expect(new Set(completed.runs.edges.map((edge) => edge.node.status))).toEqual(new Set(['COMPLETED']));
    const adminRun = all.runs.edges.find(() => true)!.node.id;
    const other = await t.gql(RUN_ID, { id: adminRun }, userToken);
    const owner = await t.gql(RUN_OWNER_NAME, { id: adminRun });
    if (owner.data!.run!.user!.name !== 'dash') expect(other.data!.run).toBeNull();
  });

  it("should answer node(id) of another user's run with null, exactly as for an unknown id", async () => {
    const all = (await t.gql(`query RunIdsAndOwners { runs(first: 100) { edges { node { id user { id } } } } }`)).data!;
    const foreign = all.runs.edges.find((edge: any) => edge.node.user?.id !== userId);
    expect(foreign).toBeDefined();
    const seen = await t.gql(`query ForeignRun($id: ID!) { node(id: $id) { id ... on Run { status } } }`, { id: foreign!.node.id }, userToken);
    expect(seen).toEqual({ data: { node: null } });
    const unknown = await t.gql(`query UnknownRun($id: ID!) { node(id: $id) { id } }`, { id: Buffer.from('Run:00000000-0000-4000-8000-000000000000').toString('base64') }, userToken);
    expect(unknown).toEqual({ data: { node: null } });
    const own = all.runs.edges.find((edge: any) => edge.node.user?.id === userId)!;
    const mine = await t.gql(`query OwnRun($id: ID!) { node(id: $id) { id } }`, { id: own.node.id }, userToken);
    expect(mine.data?.node).toEqual({ id: own.node.id });
  });

  it('should replay a stored run through runEvents and complete', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const live = await collect(client, RUN_AGENT, { input: { configurationId: configurations.FULL, prompt: 'Who?' } });
      const replayed = await collect(client, RUN_EVENTS, { runId: lastEvent(live, 'RunFinishedEvent').run.id });
      expect(kinds(replayed)).toEqual(kinds(live));
      expect(stepsOf(replayed).map((step) => step.sequence)).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await client.dispose();
    }
  });
});

function decodeRunId(globalId: string): string {
  return Buffer.from(globalId, 'base64').toString('utf8').split(':')[1]!;
}

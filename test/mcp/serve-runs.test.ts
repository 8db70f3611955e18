import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { eventually } from '../helpers/instances.ts';
import { collect, RUN_EVENTS, scriptedConfiguration, stepsOf, wsClient } from '../helpers/runs.ts';
import { THROWN_CANARY } from '../fixtures/tool-modules/probes.ts';
import { MCP_ARTIFACT_CANARY } from '../fixtures/tool-modules/mcp-probes.ts';
import {
  baseUrl,
  connectMcp,
  createUser,
  MCP_PROBES,
  MCP_RUNS,
  PROBES,
  rawInitialize,
  SET_MCP_BUDGET,
  SET_MCP_USER_ACTIVE,
  textOf,
} from './helpers.ts';

const CREATE_MCP_ADMIN = graphql(`
  mutation McpCreateAdmin($name: String!) { createUser(input: { name: $name, isAdmin: true }) { __typename ... on CreateUserPayload { token user { id } } } }
`);
const SET_MCP_ADMIN = graphql(`
  mutation McpSetAdmin($id: ID!, $isAdmin: Boolean!) { setAdmin(userId: $id, isAdmin: $isAdmin) { __typename } }
`);
const CANCEL_MCP_RUN = graphql(`
  mutation McpCancelRun($id: ID!) { cancelRun(id: $id) { __typename } }
`);

/** A secret shape and an e-mail address in a tool's arguments and result: REDACTED masks both. */
const SECRET = 'sk-proj-MCPCANARY0123456789abcdefXYZ';
const SECRET_TEXT = `key ${SECRET} for mallory@example.com`;

/** Each session is a run: who, under which configuration, one TOOL step per call, privacy-filtered, live. */
describe.each(TEST_DATABASES)('MCP serve: sessions, runs and access (%s)', (kind) => {
  let t: TestApp;
  let base: string;
  let alice: { token: string; id: string };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: `${PROBES},${MCP_PROBES}` } });
    base = await baseUrl(t);
    alice = await createUser(t, 'alice');
    await scriptedConfiguration(t, 'tools', { replies: [] });
  });
  afterAll(() => t?.stop());

  it('should refuse a missing or bad token with 401 and WWW-Authenticate, listing nothing', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token' }, { authorization: `Basic ${alice.token}` }] as Record<string, string>[]) {
      const response = await rawInitialize(base, '?configuration=tools', headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      const body = await response.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringContaining('Authentication required') } });
      expect(body.result).toBeUndefined();
    }
    await expect(connectMcp(base, 'not-a-token', 'tools')).rejects.toThrow();
  });

  it('should settle the run of a handshake the transport refused (a bad Accept header)', async () => {
    const configurationId = await scriptedConfiguration(t, 'bad-accept', { replies: [] });
    const response = await rawInitialize(base, `?configuration=${encodeURIComponent(configurationId)}`, { authorization: `Bearer ${alice.token}`, accept: 'text/html' });
    expect(response.status).toBe(406);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    // Settled right after the refusal was sent: wait for it rather than race it.
    const runs = await eventually(
      () => t.gql(MCP_RUNS, { filter: { kind: 'MCP', configurationId } }, alice.token),
      (result) => result.data?.runs.edges.every((edge) => edge.node.status !== 'RUNNING') === true,
      'the refused session to be settled',
    );
    expect(runs.data!.runs.edges.map((edge) => [edge.node.status, edge.node.errorMessage])).toEqual([
      ['CANCELLED', 'The MCP client did not complete the session handshake.'],
    ]);
  });

  it('should refuse a request from a foreign Origin (DNS rebinding) before anything else', async () => {
    const response = await rawInitialize(base, '?configuration=tools', { authorization: `Bearer ${alice.token}`, origin: 'http://evil.example' });
    expect(response.status).toBe(403);
    expect((await response.json()).error.message).toContain('this Origin may not call /mcp');
  });

  it("should not let another user's token use a session, and check the token on every request", async () => {
    const mallory = await createUser(t, 'mallory');
    const carol = member((await t.gql(CREATE_MCP_ADMIN, { name: 'carol' })).data?.createUser, 'CreateUserPayload');
    const mcp = await connectMcp(base, carol.token, 'tools');
    try {
      const sessionId = mcp.transport.sessionId!;
      const stolen = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${mallory.token}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': mcp.transport.protocolVersion ?? '2025-06-18',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo_text', arguments: { text: 'stolen' } } }),
      });
      expect(stolen.status).toBe(404);
      expect(JSON.stringify(await stolen.json())).not.toContain('stolen');
      // An admin's tool, until the admin is demoted: the next call is refused (the token is read anew).
      expect((await mcp.client.callTool({ name: 'get_env', arguments: {} })).isError).toBe(false);
      await t.gql(SET_MCP_ADMIN, { id: carol.user.id, isAdmin: false });
      expect(textOf(await mcp.client.callTool({ name: 'get_env', arguments: {} }))).toBe('Error: tool "get_env" not permitted');
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).not.toContain('get_env');
    } finally {
      await mcp.close();
    }
    const steps = (await t.gql(MCP_RUNS, { filter: { kind: 'MCP', userId: carol.user.id } })).data!.runs.edges[0]!.node.steps.edges;
    expect(steps.map((edge) => edge.node.toolName)).toEqual(['get_env', 'get_env']);
  });

  it('should refuse a session that names no configuration or an unknown one, and take the name from the header', async () => {
    const missing = await rawInitialize(base, '', { authorization: `Bearer ${alice.token}` });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toContain('Name the configuration');
    const unknown = await rawInitialize(base, '?configuration=no-such-configuration', { authorization: `Bearer ${alice.token}` });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toContain('No configuration has this name or id');
    const byHeader = await connectMcp(base, alice.token, null, { 'x-airlock-configuration': 'tools' });
    expect(textOf(await byHeader.client.callTool({ name: 'echo_text', arguments: { text: 'by header' } }))).toBe('by header');
    await byHeader.close();
  });

  it.each(['NONE', 'METADATA', 'REDACTED', 'FULL'] as const)('should store the session as an MCP run filtered at %s', async (level) => {
    const configurationId = await scriptedConfiguration(t, `level-${level}`, { replies: [], privacyLevel: level });
    const mcp = await connectMcp(base, alice.token, configurationId);
    await mcp.client.callTool({ name: 'echo_text', arguments: { text: SECRET_TEXT } });
    await mcp.client.callTool({ name: 'get_env', arguments: {} });
    await mcp.close();
    const listed = await t.gql(MCP_RUNS, { filter: { kind: 'MCP', configurationId } }, alice.token);
    expect(listed.errors).toBeUndefined();
    const runs = listed.data!.runs.edges.map((edge) => edge.node);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run).toMatchObject({ kind: 'MCP', status: 'COMPLETED', terminationReason: 'COMPLETED', privacyLevel: level, prompt: null, iterations: 0 });
    expect(run.user).toEqual({ id: alice.id, name: 'alice' });
    expect(run.configuration).toEqual({ id: configurationId, name: `level-${level}` });
    const steps = run.steps.edges.map((edge) => edge.node);
    expect(steps.map((step) => [step.kind, step.round, step.toolName, step.toolIsError])).toEqual([
      ['TOOL', 1, 'echo_text', false],
      ['TOOL', 2, 'get_env', true],
    ]);
    const [echo] = steps;
    const stored = JSON.stringify(steps);
    if (level === 'FULL') {
      expect(echo!.toolResult).toBe(SECRET_TEXT);
      expect(echo!.toolArguments).toEqual({ text: SECRET_TEXT });
      // Artifacts stay home: stored with the audit record, never sent over MCP.
      expect(echo!.artifacts).toEqual([{ __typename: 'TableArtifact', label: 'echoed', columns: ['canary'], rows: [[MCP_ARTIFACT_CANARY]] }]);
    } else if (level === 'REDACTED') {
      expect(echo!.toolResult).toBe('key *** for ***');
      expect(stored).not.toContain(SECRET);
      expect(echo!.artifacts).toHaveLength(1);
    } else {
      expect(echo).toMatchObject({ toolResult: null, toolArguments: null, contentRedacted: true, toolResultLength: SECRET_TEXT.length, toolArtifactsCount: 1 });
      expect(stored).not.toContain(SECRET);
      expect(stored).not.toContain(MCP_ARTIFACT_CANARY);
    }
    const agentOnly = await t.gql(MCP_RUNS, { filter: { kind: 'AGENT', configurationId } }, alice.token);
    expect(agentOnly.data!.runs.edges).toEqual([]);
  });

  it('should stream an open session on runEvents, and end it CANCELLED on cancelRun', async () => {
    const configurationId = await scriptedConfiguration(t, 'live', { replies: [], privacyLevel: 'FULL' });
    const mcp = await connectMcp(base, alice.token, configurationId);
    const open = await t.gql(MCP_RUNS, { filter: { kind: 'MCP', configurationId, status: ['RUNNING'] } }, alice.token);
    const runId = open.data!.runs.edges[0]!.node.id;
    const ws = wsClient(`${base}/graphql`, alice.token);
    try {
      const events = collect(ws, RUN_EVENTS, { runId });
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'live' } }))).toBe('live');
      const cancelled = await t.gql(CANCEL_MCP_RUN, { id: runId }, alice.token);
      expect(cancelled.errors).toBeUndefined();
      const received = await events;
      expect(stepsOf(received).map((step) => [step.toolName, step.toolResult])).toEqual([['echo_text', 'live']]);
      expect(received.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { id: runId, status: 'CANCELLED', terminationReason: 'CANCELLED' } });
      // The session is gone with its run.
      await expect(mcp.client.callTool({ name: 'echo_text', arguments: { text: 'after' } })).rejects.toThrow();
    } finally {
      await ws.dispose();
      await mcp.client.close();
    }
  });

  it('should count every call as one request of the budgets and refuse, without running, once exhausted', async () => {
    const configurationId = await scriptedConfiguration(t, 'budgeted', { replies: [], privacyLevel: 'FULL' });
    const budget = await t.gql(SET_MCP_BUDGET, { input: { subjectId: configurationId, period: 'DAILY', maxRequests: 2 } });
    expect(budget.errors).toBeUndefined();
    const mcp = await connectMcp(base, alice.token, configurationId);
    try {
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'one' } }))).toBe('one');
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'two' } }))).toBe('two');
      const third = await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'three' } });
      expect(third).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: 'Error: tool "echo_text" was not executed: a request budget of this user or configuration is exhausted.' }],
      });
    } finally {
      await mcp.close();
    }
    const run = (await t.gql(MCP_RUNS, { filter: { kind: 'MCP', configurationId } }, alice.token)).data!.runs.edges[0]!.node;
    const stored = run.steps.edges.map((edge) => edge.node);
    expect(stored.map((step) => step.toolIsError)).toEqual([false, false, true]);
    // The refused call never ran: no artifact was produced for it.
    expect(stored[2]!.artifacts).toEqual([]);
  });

  it('should end a session when its user is deactivated: the next request gets 401, new sessions too', async () => {
    const bob = await createUser(t, 'bob');
    const mcp = await connectMcp(base, bob.token, 'tools');
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(0);
    await t.gql(SET_MCP_USER_ACTIVE, { id: bob.id, active: false });
    await expect(mcp.client.listTools()).rejects.toThrow();
    await mcp.client.close();
    const response = await rawInitialize(base, '?configuration=tools', { authorization: `Bearer ${bob.token}` });
    expect(response.status).toBe(401);
    // The revocation ends the session as it arrives; its run is settled just after (not in the mutation).
    const statuses = await eventually(
      async () => (await t.gql(MCP_RUNS, { filter: { kind: 'MCP', userId: bob.id } })).data!.runs.edges.map((edge) => edge.node.status),
      (seen) => !seen.includes('RUNNING'),
      "bob's session run to be settled",
    );
    expect(statuses).toEqual(['CANCELLED']);
  });

  it('should keep tokens and thrown secrets out of responses, logs and stored runs (canary)', async () => {
    const mcp = await connectMcp(base, alice.token, 'tools');
    const thrown = await mcp.client.callTool({ name: 'probe_throw', arguments: {} });
    await mcp.close();
    const password = new URL(THROWN_CANARY).password;
    expect(JSON.stringify(thrown)).not.toContain(password);
    const logs = t.logs.text();
    const stored = await sql<{ row: string }>`select row_to_json(r)::text as row from runs r union all select row_to_json(s)::text from run_steps s`.execute(t.app.services.db);
    const storedText = stored.rows.map((row) => row.row).join('\n');
    for (const secret of [alice.token, t.adminToken, password]) {
      expect(logs).not.toContain(secret);
      expect(storedText).not.toContain(secret);
    }
  });
});

/** Idle sessions close (the session cap: serve-session-cap.test.ts). */
describe.each(TEST_DATABASES)('MCP serve: idle sessions (%s)', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: MCP_PROBES, AIRLOCK_MCP_SESSION_IDLE_MS: '400' } });
    base = await baseUrl(t);
    await scriptedConfiguration(t, 'tools', { replies: [] });
  });
  afterAll(() => t?.stop());

  it('should close idle sessions COMPLETED', async () => {
    // On a loaded machine the connect itself may outlast the idle deadline (its session is then
    // closed under it, as it should be): connect again until one succeeds.
    const first = await vi.waitFor(() => connectMcp(base, t.adminToken, 'tools'), { timeout: 60_000, interval: 200 });
    // No request for AIRLOCK_MCP_SESSION_IDLE_MS: the session closes and its run is settled (so is
    // any session a slow connect lost).
    await vi.waitFor(async () => {
      const runs = await t.gql(MCP_RUNS, { filter: { kind: 'MCP' } });
      const ends = runs.data!.runs.edges.map((edge) => [edge.node.status, edge.node.terminationReason]);
      expect(ends.length).toBeGreaterThan(0);
      expect(ends.filter(([status, reason]) => status !== 'COMPLETED' || reason !== 'COMPLETED')).toEqual([]);
    }, { timeout: 30_000, interval: 100 });
    await expect(first.client.listTools()).rejects.toThrow();
    await first.client.close();
  });
});

// A stopping server used to settle its open sessions (FAILED/INTERRUPTED). Sessions live in the
// database now and outlive the instance that served them: what a stop does (its calls in flight
// abandoned and stored, the session open and served elsewhere) is in serve-instances.test.ts.

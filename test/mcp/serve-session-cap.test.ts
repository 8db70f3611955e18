import { randomBytes } from 'node:crypto';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../src/db/database.ts';
import type { RunBusEvent } from '../../src/runtime/events.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/instances.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { HANG_STARTED } from '../fixtures/tool-modules/mcp-probes.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { baseUrl, connectMcp, createUser, MCP_PROBES, rawInitialize, textOf } from './helpers.ts';

/**
 * Issue 26, hole 5: an MCP session used to count as a running run, so clients that never delete
 * theirs (the conformance suite, IDEs that restart) filled AIRLOCK_MAX_RUNNING_RUNS_PER_USER and
 * locked their user out of sessions and agent runs alike. Sessions have their own cap now
 * (AIRLOCK_MAX_MCP_SESSIONS_PER_USER), and one more closes the least recently used.
 */
const RUN_CAP = 2;
const SESSION_CAP = 3;

const START_RUN = `
  mutation SessionCapStartRun($input: RunAgentInput!) {
    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }
  }`;
const RUN_STATE = `query SessionCapRunState($id: ID!) { run(id: $id) { status terminationReason } }`;

/** One JSON-RPC request on an open session, answered as it went over the wire. */
function rawSessionRequest(base: string, token: string, sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }),
  });
}

/** The RUNNING MCP runs of a user (raw ids), as stored. */
async function openSessionRuns(t: TestApp, userId: string): Promise<string[]> {
  const rows = await t.app.services.db
    .selectFrom('runs')
    .select('id')
    .where('user_id', '=', decodeGlobalID(userId).id)
    .where('kind', '=', 'MCP')
    .where('status', '=', 'RUNNING')
    .execute();
  return rows.map((row) => row.id).sort();
}

/** A session of the SDK's client and the id of its run (the one RUNNING run it added). */
async function openTracked(t: TestApp, base: string, user: { token: string; id: string }) {
  const before = new Set(await openSessionRuns(t, user.id));
  const mcp = await connectMcp(base, user.token, 'tools');
  const added = (await openSessionRuns(t, user.id)).filter((id) => !before.has(id));
  expect(added).toHaveLength(1);
  return { mcp, runId: added[0]!, sessionId: mcp.transport.sessionId! };
}

describe.each(TEST_DATABASES)('MCP serve: the session cap (%s)', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind, {
      env: { AIRLOCK_TOOL_MODULES: MCP_PROBES, AIRLOCK_MAX_RUNNING_RUNS_PER_USER: String(RUN_CAP), AIRLOCK_MAX_MCP_SESSIONS_PER_USER: String(SESSION_CAP) },
    });
    base = await baseUrl(t);
    await scriptedConfiguration(t, 'tools', { replies: [] });
  });
  afterAll(() => t?.stop());

  it('should let a user with more open sessions than AIRLOCK_MAX_RUNNING_RUNS_PER_USER still start an agent run', async () => {
    const user = await createUser(t, 'many-sessions');
    const configurationId = await scriptedConfiguration(t, 'answers', { replies: [], finalReply: { content: 'done' } });
    const sessions = [];
    try {
      for (let index = 0; index < SESSION_CAP; index++) sessions.push(await connectMcp(base, user.token, 'tools'));
      expect(await openSessionRuns(t, user.id)).toHaveLength(SESSION_CAP);
      const started = await t.gql(START_RUN, { input: { configurationId, prompt: 'still allowed' } }, user.token);
      expect(started.errors).toBeUndefined();
      expect(started.data.startRun).toMatchObject({ __typename: 'Run' });
      const finished = await eventually(
        () => t.gql(RUN_STATE, { id: started.data.startRun.id }, user.token),
        (state) => state.data?.run?.status !== 'RUNNING',
        'the agent run to finish',
      );
      expect(finished.data.run).toEqual({ status: 'COMPLETED', terminationReason: 'COMPLETED' });
      // Every session is still open and working.
      for (const session of sessions) expect(textOf(await session.client.callTool({ name: 'echo_text', arguments: { text: 'open' } }))).toBe('open');
    } finally {
      for (const session of sessions) await session.close();
    }
  });

  it('should close the least recently used session when one more opens: 404 on it, its run settled, the others and the newest working', async () => {
    const user = await createUser(t, 'lru');
    const [first, second, third] = [await openTracked(t, base, user), await openTracked(t, base, user), await openTracked(t, base, user)];
    let newest: Awaited<ReturnType<typeof openTracked>> | undefined;
    const events = t.app.services.bus.subscribe(second.runId);
    try {
      // The first is used again: the second is now the least recently used.
      expect(textOf(await first.mcp.client.callTool({ name: 'echo_text', arguments: { text: 'recent' } }))).toBe('recent');
      newest = await openTracked(t, base, user);
      expect(await openSessionRuns(t, user.id)).toEqual([first.runId, third.runId, newest.runId].sort());

      const answer = await rawSessionRequest(base, user.token, second.sessionId, 'tools/list');
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: expect.stringContaining('Session not found') } });
      const [row] = await t.app.services.db.selectFrom('runs').selectAll().where('id', '=', second.runId).execute();
      expect(row).toMatchObject({ kind: 'MCP', status: 'COMPLETED', termination_reason: 'COMPLETED', error_message: null });
      expect(row!.finished_at).not.toBeNull();
      // Settled as any session end is: announced on the bus with the settled row.
      let finished: Extract<RunBusEvent<RunRow>, { type: 'finished' }> | undefined;
      for await (const event of events) {
        if (event.type === 'finished') {
          finished = event;
          break;
        }
      }
      expect(finished?.run).toMatchObject({ id: second.runId, status: 'COMPLETED' });

      for (const open of [first, third, newest]) expect(textOf(await open.mcp.client.callTool({ name: 'echo_text', arguments: { text: 'works' } }))).toBe('works');
    } finally {
      await events.return?.();
      await second.mcp.client.close();
      for (const open of [first, third, newest]) await open?.mcp.close();
    }
  });

  it(`should end many opens at once by one user with exactly ${SESSION_CAP} sessions open, each open answered`, async () => {
    const user = await createUser(t, 'many-at-once');
    const answers = await Promise.all(Array.from({ length: 12 }, () => rawInitialize(base, '?configuration=tools', { authorization: `Bearer ${user.token}` })));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 12 }, () => 200));
    const sessionIds = answers.map((answer) => answer.headers.get('mcp-session-id')!);
    expect(new Set(sessionIds).size).toBe(12);
    expect(await openSessionRuns(t, user.id)).toHaveLength(SESSION_CAP);
    const statuses = await Promise.all(sessionIds.map(async (sessionId) => (await rawSessionRequest(base, user.token, sessionId, 'tools/list')).status));
    expect(statuses.filter((status) => status === 200)).toHaveLength(SESSION_CAP);
    expect(statuses.filter((status) => status === 404)).toHaveLength(12 - SESSION_CAP);
    const settled = await t.app.services.db
      .selectFrom('runs')
      .select(['status', 'termination_reason'])
      .where('user_id', '=', decodeGlobalID(user.id).id)
      .where('status', '<>', 'RUNNING')
      .execute();
    expect(settled).toEqual(Array.from({ length: 12 - SESSION_CAP }, () => ({ status: 'COMPLETED', termination_reason: 'COMPLETED' })));
  });
});

/**
 * The cap counts across instances: the least recently used session closes wherever it was opened
 * or is being served. A session closed elsewhere is refused at its next request on any instance;
 * an instance serving a call of it learns it at its next check of its calls in flight (every second).
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('MCP serve: the session cap across two instances on postgres', () => {
  let first: TestApp;
  let second: TestApp;
  let firstBase: string;
  let secondBase: string;

  beforeAll(async () => {
    const env = {
      AIRLOCK_TOOL_MODULES: MCP_PROBES,
      AIRLOCK_MAX_MCP_SESSIONS_PER_USER: '2',
      AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'),
      AIRLOCK_ADMIN_TOKEN: `session-cap-admin-${randomBytes(8).toString('hex')}`,
    };
    first = await startTestApp('postgres', { env, keepDatabase: true });
    await scriptedConfiguration(first, 'tools', { replies: [] });
    second = await startTestApp('postgres', { env, database: first.database, keepDatabase: true });
    [firstBase, secondBase] = [await baseUrl(first), await baseUrl(second)];
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await first?.database.drop();
  });

  it("should settle the least recently used session, opened on another instance: every instance answers 404 at the session's next request", async () => {
    const user = await createUser(first, 'two-instances');
    const older = await openTracked(first, firstBase, user);
    const recent = await openTracked(first, firstBase, user);
    const elsewhere = await openTracked(second, secondBase, user);
    try {
      expect(await openSessionRuns(first, user.id)).toEqual([recent.runId, elsewhere.runId].sort());
      const answer = await rawSessionRequest(firstBase, user.token, older.sessionId, 'tools/call', { name: 'echo_text', arguments: { text: 'late' } });
      expect(answer.status).toBe(404);
      expect(JSON.stringify(await answer.json())).not.toContain('late');
      const [row] = await first.app.services.db.selectFrom('runs').select(['status', 'termination_reason']).where('id', '=', older.runId).execute();
      expect(row).toEqual({ status: 'COMPLETED', termination_reason: 'COMPLETED' });
      expect(textOf(await recent.mcp.client.callTool({ name: 'echo_text', arguments: { text: 'here' } }))).toBe('here');
      expect(textOf(await elsewhere.mcp.client.callTool({ name: 'echo_text', arguments: { text: 'there' } }))).toBe('there');
    } finally {
      await older.mcp.client.close();
      await recent.mcp.close();
      await elsewhere.mcp.close();
    }
  });

  it('should end a session closed by another instance while a call of it runs: the serving instance abandons the call and stores its step', async () => {
    const user = await createUser(first, 'closed-while-busy');
    const busy = await openTracked(first, firstBase, user);
    const hangsBefore = first.logs.lines.filter((line) => line.includes(HANG_STARTED)).length;
    const hanging = busy.mcp.client.callTool({ name: 'hang_forever', arguments: {} }).then(
      () => 'answered',
      () => 'failed',
    );
    await eventually(async () => first.logs.lines.filter((line) => line.includes(HANG_STARTED)).length, (count) => count > hangsBefore, 'the call to start');
    const idle = await openTracked(first, firstBase, user);
    const elsewhere = await openTracked(second, secondBase, user);
    try {
      expect(await openSessionRuns(first, user.id)).toEqual([idle.runId, elsewhere.runId].sort());
      // No request comes on the busy session: the instance serving its call finds it closed, which abandons the call.
      expect(await hanging).toMatch(/answered|failed/);
      const steps = await eventually(
        () => first.app.services.db.selectFrom('run_steps').select(['kind']).where('run_id', '=', busy.runId).execute(),
        (rows) => rows.length === 1,
        'the abandoned call to be stored',
      );
      expect(steps).toEqual([{ kind: 'TOOL' }]);
      const [row] = await first.app.services.db.selectFrom('runs').select(['status', 'termination_reason']).where('id', '=', busy.runId).execute();
      expect(row).toEqual({ status: 'COMPLETED', termination_reason: 'COMPLETED' });
    } finally {
      await busy.mcp.client.close();
      await idle.mcp.close();
      await elsewhere.mcp.close();
    }
  });
});

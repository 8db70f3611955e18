import { encodeGlobalID } from '@pothos/plugin-relay';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSessionStep, settleEndedSessions } from '../../src/db/repositories/mcp-sessions.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { eventually, oneToN } from '../helpers/instances.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { HANG_STARTED } from '../fixtures/tool-modules/mcp-probes.ts';
import { connectMcp, createUser, MCP_PROBES, textOf } from './helpers.ts';
import { attachMcp, mcpCluster, sessionPost, type McpCluster, type McpInstance } from './instances.ts';

const CANCEL_RUN = `mutation InstancesCancelMcpRun($id: ID!) { cancelRun(id: $id) { __typename } }`;

/**
 * Issue 27: an MCP session is its run row, not the memory of the process that opened it. Several
 * instances on one database (each with its own in-process bus: nothing but the database connects
 * them): a session opened on one is served by any other, outlives the one that opened it, stays
 * its user's alone, ends once however many instances sweep, and numbers its steps 1..n however
 * many instances store them at once.
 */
describe.each(TEST_DATABASES)('MCP sessions on any instance (%s)', (kind) => {
  let cluster: McpCluster;
  let a: McpInstance;
  let b: McpInstance;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };

  /** The session's run as stored. */
  const runRow = (runId: string) =>
    cluster.db.selectFrom('runs').select(['status', 'termination_reason', 'kind', 'state_version', 'last_request_at']).where('id', '=', runId).executeTakeFirstOrThrow();
  const storedSteps = (runId: string) =>
    cluster.db.selectFrom('run_steps').select(['sequence', 'round', 'kind', 'payload']).where('run_id', '=', runId).orderBy('sequence').execute();

  beforeAll(async () => {
    // A tool timeout longer than a test: a hanging call ends only when its session does.
    cluster = await mcpCluster(kind, { AIRLOCK_TOOL_MODULES: MCP_PROBES, AIRLOCK_TOOL_TIMEOUT_MS: '120000' });
    a = await cluster.start();
    b = await cluster.start();
    await scriptedConfiguration(a, 'tools', { replies: [], privacyLevel: 'FULL' });
    alice = await createUser(a, 'alice');
    bob = await createUser(a, 'bob');
  });
  afterAll(() => cluster?.dispose());

  it('should serve a session opened on A from B: the same tools listed, calls on both stored as one run, closed from B', async () => {
    const onA = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = onA.transport.sessionId!;
    const onB = await attachMcp(b.base, alice.token, sessionId, onA.transport.protocolVersion);
    try {
      expect(textOf(await onA.client.callTool({ name: 'echo_text', arguments: { text: 'on A' } }))).toBe('on A');
      const listedOnA = (await onA.client.listTools()).tools.map((tool) => tool.name);
      const listedOnB = (await onB.client.listTools()).tools.map((tool) => tool.name);
      expect(listedOnB).toEqual(listedOnA);
      expect(listedOnB).toContain('echo_text');
      expect(textOf(await onB.client.callTool({ name: 'echo_text', arguments: { text: 'on B' } }))).toBe('on B');

      // The session id is the id of its run: one run, both calls, in order.
      expect(await runRow(sessionId)).toMatchObject({ kind: 'MCP', status: 'RUNNING' });
      const steps = await storedSteps(sessionId);
      expect(steps.map((step) => [step.sequence, step.round, step.kind, (step.payload as { toolResult?: string }).toolResult])).toEqual([
        [1, 1, 'TOOL', 'on A'],
        [2, 2, 'TOOL', 'on B'],
      ]);
      expect(steps.map((step) => (step.payload as { toolCallId?: string }).toolCallId)).toEqual(['call_1', 'call_2']);

      // Deleted on B: closed for A too.
      await onB.transport.terminateSession();
      expect(await runRow(sessionId)).toMatchObject({ status: 'COMPLETED', termination_reason: 'COMPLETED' });
      const late = await sessionPost(a.base, alice.token, sessionId, 'tools/list');
      expect(late.status).toBe(404);
      expect(await late.json()).toMatchObject({ error: { code: -32001, message: expect.stringContaining('Session not found') } });
    } finally {
      await onA.client.close();
      await onB.client.close();
    }
  });

  it("should refuse a session of one user to another user's token, on every instance, exactly as an unknown one", async () => {
    const mcp = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = mcp.transport.sessionId!;
    try {
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'mine' } }))).toBe('mine');
      const before = await runRow(sessionId);
      const unknown = await (await sessionPost(b.base, bob.token, crypto.randomUUID(), 'tools/list')).json();
      for (const instance of [a, b]) {
        for (const token of [bob.token, cluster.adminToken]) {
          const stolen = await sessionPost(instance.base, token, sessionId, 'tools/call', { name: 'echo_text', arguments: { text: 'stolen' } });
          expect(stolen.status).toBe(404);
          expect(await stolen.json()).toEqual(unknown);
          const deleted = await fetch(`${instance.base}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId } });
          expect(deleted.status).toBe(404);
        }
      }
      // Nothing ran, nothing was stored, and the refused requests did not count as the session's use.
      expect(await storedSteps(sessionId)).toHaveLength(1);
      expect(await runRow(sessionId)).toEqual(before);
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'still mine' } }))).toBe('still mine');
    } finally {
      await mcp.close();
    }
  });

  it('should number the steps of one session 1..n when its calls run at once on two instances', async () => {
    const onA = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = onA.transport.sessionId!;
    const onB = await attachMcp(b.base, alice.token, sessionId, onA.transport.protocolVersion);
    const CALLS = 24;
    try {
      const texts = Array.from({ length: CALLS }, (_, index) => `call ${index}`);
      const answers = await Promise.all(
        texts.map((text, index) => (index % 2 === 0 ? onA : onB).client.callTool({ name: 'echo_text', arguments: { text } }).then(textOf)),
      );
      expect(answers).toEqual(texts);
      const steps = await storedSteps(sessionId);
      expect(steps.map((step) => step.sequence)).toEqual(oneToN(CALLS));
      expect(steps.map((step) => step.round)).toEqual(oneToN(CALLS));
      expect(steps.map((step) => (step.payload as { round: number }).round)).toEqual(oneToN(CALLS));
      expect(steps.map((step) => (step.payload as { toolCallId: string }).toolCallId)).toEqual(oneToN(CALLS).map((n) => `call_${n}`));
      expect(steps.map((step) => (step.payload as { toolResult: string }).toolResult).sort()).toEqual([...texts].sort());
    } finally {
      await onA.close();
      await onB.client.close();
    }
  });

  it("should give step writes of one session from both instances' connections at once distinct, gapless sequences", async () => {
    const mcp = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = mcp.transport.sessionId!;
    const WRITES = 80;
    try {
      // Straight at the statement, many at a time: on PostgreSQL each instance's pool holds several connections.
      const sequences = await Promise.all(
        Array.from({ length: WRITES }, (_, index) =>
          insertSessionStep((index % 2 === 0 ? a : b).app.services.db, sessionId, { payload: { kind: 'TOOL', round: 0, toolName: `write ${index}` }, durationMs: 1 }),
        ),
      );
      expect([...sequences].sort((x, y) => x - y)).toEqual(oneToN(WRITES));
      const steps = await storedSteps(sessionId);
      expect(steps.map((step) => step.sequence)).toEqual(oneToN(WRITES));
      // Each write got the sequence it was stored under.
      for (const [index, sequence] of sequences.entries()) expect((steps[sequence - 1]!.payload as { toolName: string }).toolName).toBe(`write ${index}`);
    } finally {
      await mcp.close();
    }
  });

  it('should settle each idle session once when several sweeps on both instances run at once', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => connectMcp(a.base, bob.token, 'tools')));
    const ids = sessions.map((session) => session.transport.sessionId!);
    try {
      // Their last request an hour ago: idle past any deadline of this suite's (600 000 ms).
      await cluster.db.updateTable('runs').set({ last_request_at: sql<Date>`now() - interval '1 hour'` }).where('id', 'in', ids).execute();
      const sweeps = await Promise.all(
        [a, b, a, b, a, b].map((instance) => settleEndedSessions(instance.app.services.db, instance.app.services.config.mcpSessionIdleMs, ids)),
      );
      const settled = sweeps.flatMap((rows) => rows.map((row) => row.id));
      // Each exactly once: no session in two sweeps' results (the instances' own sweeps, which run
      // meanwhile on their timers, may have taken some: they are sweeps at once too).
      expect(new Set(settled).size).toBe(settled.length);
      expect(settled.every((id) => ids.includes(id))).toBe(true);
      for (const id of ids) {
        // state_version is raised by every change of the run's state: once, by the one settlement.
        expect(await runRow(id)).toMatchObject({ status: 'COMPLETED', termination_reason: 'COMPLETED', state_version: 1 });
        const answer = await sessionPost(b.base, bob.token, id, 'tools/list');
        expect(answer.status).toBe(404);
      }
    } finally {
      for (const session of sessions) await session.client.close();
    }
  });

  it('should refuse a request past the idle deadline before any sweep settled the session, and settle it then', async () => {
    const mcp = await connectMcp(a.base, bob.token, 'tools');
    const sessionId = mcp.transport.sessionId!;
    try {
      await cluster.db.updateTable('runs').set({ last_request_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', sessionId).execute();
      const answer = await sessionPost(b.base, bob.token, sessionId, 'tools/call', { name: 'echo_text', arguments: { text: 'too late' } });
      expect(answer.status).toBe(404);
      expect(await storedSteps(sessionId)).toEqual([]);
      expect(await runRow(sessionId)).toMatchObject({ status: 'COMPLETED', termination_reason: 'COMPLETED', state_version: 1 });
    } finally {
      await mcp.client.close();
    }
  });

  it('should end a session on cancelRun from another instance than the one serving its call: the call abandoned and stored, the run CANCELLED', async () => {
    const onA = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = onA.transport.sessionId!;
    const onB = await attachMcp(b.base, alice.token, sessionId, onA.transport.protocolVersion);
    try {
      const hangs = b.logs.lines.filter((line) => line.includes(HANG_STARTED)).length;
      const hanging = onB.client.callTool({ name: 'hang_forever', arguments: {} }).then(textOf, (error: unknown) => String(error));
      await eventually(async () => b.logs.lines.filter((line) => line.includes(HANG_STARTED)).length, (count) => count > hangs, 'the call to start on B');
      // Cancelled through A, which serves nothing of it: B finds out from the database.
      const cancelled = await a.gql(CANCEL_RUN, { id: encodeGlobalID('Run', sessionId) }, alice.token);
      expect(cancelled.errors).toBeUndefined();
      expect(await hanging).toBe('Error: tool "hang_forever" failed.');
      const row = await eventually(() => runRow(sessionId), (run) => run.status !== 'RUNNING', 'the session to be settled');
      expect(row).toMatchObject({ status: 'CANCELLED', termination_reason: 'CANCELLED' });
      expect((await storedSteps(sessionId)).map((step) => [step.sequence, (step.payload as { toolName: string }).toolName])).toEqual([[1, 'hang_forever']]);
      expect((await sessionPost(a.base, alice.token, sessionId, 'tools/list')).status).toBe(404);
    } finally {
      await onA.client.close();
      await onB.client.close();
    }
  });

  it('should end a call its client cancels (notifications/cancelled) on the instance serving it, and store its step', async () => {
    const mcp = await connectMcp(a.base, alice.token, 'tools');
    const sessionId = mcp.transport.sessionId!;
    try {
      const hangs = a.logs.lines.filter((line) => line.includes(HANG_STARTED)).length;
      const controller = new AbortController();
      const call = mcp.client.callTool({ name: 'hang_forever', arguments: {} }, undefined, { signal: controller.signal }).catch((error: unknown) => error);
      await eventually(async () => a.logs.lines.filter((line) => line.includes(HANG_STARTED)).length, (count) => count > hangs, 'the call to start on A');
      controller.abort();
      await call;
      // Only the cancellation can end it: the tool never answers, and its timeout is longer than the test.
      const steps = await eventually(() => storedSteps(sessionId), (rows) => rows.length === 1, 'the cancelled call to be stored');
      expect(steps[0]!.payload).toMatchObject({ toolName: 'hang_forever', toolIsError: true, toolResult: 'Error: tool "hang_forever" failed.' });
      expect(await runRow(sessionId)).toMatchObject({ status: 'RUNNING' });
    } finally {
      await mcp.close();
    }
  });

  it('should keep a session open when the instance that opened it stops: its call in flight abandoned and stored, the session answering on B', async () => {
    const c = await cluster.start();
    const onC = await connectMcp(c.base, alice.token, 'tools');
    const sessionId = onC.transport.sessionId!;
    const protocolVersion = onC.transport.protocolVersion;
    expect(textOf(await onC.client.callTool({ name: 'echo_text', arguments: { text: 'before the stop' } }))).toBe('before the stop');
    const hanging = onC.client.callTool({ name: 'hang_forever', arguments: {} }).catch((error: unknown) => error);
    await eventually(async () => c.logs.text().includes(HANG_STARTED), Boolean, 'the call to start on C');
    // C stops entirely: its server, its background tasks, its database handle.
    await c.stop();
    await hanging;
    await onC.client.close();
    expect(await runRow(sessionId)).toMatchObject({ status: 'RUNNING' });

    const onB = await attachMcp(b.base, alice.token, sessionId, protocolVersion);
    try {
      expect((await onB.client.listTools()).tools.map((tool) => tool.name)).toContain('echo_text');
      expect(textOf(await onB.client.callTool({ name: 'echo_text', arguments: { text: 'after the stop' } }))).toBe('after the stop');
      const steps = await storedSteps(sessionId);
      expect(steps.map((step) => [step.sequence, (step.payload as { toolName: string }).toolName])).toEqual([
        [1, 'echo_text'],
        [2, 'hang_forever'],
        [3, 'echo_text'],
      ]);
      expect((steps[1]!.payload as { toolIsError: boolean }).toolIsError).toBe(true);
    } finally {
      await onB.transport.terminateSession();
      await onB.client.close();
    }
    expect(await runRow(sessionId)).toMatchObject({ status: 'COMPLETED', termination_reason: 'COMPLETED' });
  });
});


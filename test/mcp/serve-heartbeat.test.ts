import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { eventually } from '../helpers/instances.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { baseUrl, connectMcp, MCP_PROBES, textOf } from './helpers.ts';

/** Stale after 3 heartbeats (750 ms here) for an agent run. */
const HEARTBEAT_MS = 250;

/**
 * Issue 27: a session belongs to no process (it is its run row, served by any instance), so no
 * process proves it alive and the stale-heartbeat sweep of agent runs must leave it alone: it
 * ends by its own rules (its idle deadline, DELETE, the cap, cancelRun, loss of access), not
 * because its heartbeat is old. This file used to check that the process holding a session
 * touched its heartbeat; nothing does any more.
 */
describe.each(TEST_DATABASES)('MCP serve: sessions outside the stale-heartbeat sweep (%s)', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: MCP_PROBES, AIRLOCK_RUN_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    base = await baseUrl(t);
    await scriptedConfiguration(t, 'tools', { replies: [], privacyLevel: 'FULL' });
  });
  afterAll(() => t?.stop());

  it('should keep a session without a request RUNNING through the stale-heartbeat sweep, however old its heartbeat', async () => {
    const mcp = await connectMcp(base, t.adminToken, 'tools');
    const runId = mcp.transport.sessionId!;
    try {
      const run = () =>
        t.app.services.db
          .selectFrom('runs')
          .select(['status', sql<number>`extract(epoch from now() - heartbeat_at) * 1000`.as('heartbeatAgeMs')])
          .where('id', '=', runId)
          .executeTakeFirstOrThrow();
      // No request and no heartbeat for well past the stale window (the sweep also runs on its own meanwhile).
      await eventually(run, (row) => Number(row.heartbeatAgeMs) > HEARTBEAT_MS * 6, 'the heartbeat to be stale');
      await t.app.services.runHost.settleStale();
      expect((await run()).status).toBe('RUNNING');
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'still here' } }))).toBe('still here');
    } finally {
      await mcp.close();
    }
  });
});

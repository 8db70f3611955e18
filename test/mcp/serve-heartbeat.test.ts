import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { baseUrl, connectMcp, MCP_PROBES, MCP_RUNS, textOf } from './helpers.ts';

/** Stale after 3 heartbeats (750 ms here): an open session proves its run alive like a driven run. */
const HEARTBEAT_MS = 250;

describe.each(TEST_DATABASES)('MCP serve: heartbeat (%s)', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: MCP_PROBES, AIRLOCK_RUN_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    base = await baseUrl(t);
    await scriptedConfiguration(t, 'tools', { replies: [] });
  });
  afterAll(() => t?.stop());

  it('should keep an open session RUNNING through the stale-heartbeat sweep', async () => {
    const mcp = await connectMcp(base, t.adminToken, 'tools');
    try {
      const open = await t.gql(MCP_RUNS, { filter: { kind: 'MCP', status: ['RUNNING'] } });
      const runId = decodeGlobalID(open.data!.runs.edges[0]!.node.id).id;
      const run = () => t.app.services.db.selectFrom('runs').select(['status', 'created_at', 'heartbeat_at']).where('id', '=', runId).executeTakeFirstOrThrow();
      // Wait until the run has lived well past the stale window, its heartbeat touched meanwhile.
      await vi.waitFor(async () => {
        const row = await run();
        expect(row.heartbeat_at.getTime() - row.created_at.getTime()).toBeGreaterThan(HEARTBEAT_MS * 4);
      }, { timeout: 10_000, interval: HEARTBEAT_MS });
      await t.app.services.runs.settleStale();
      expect((await run()).status).toBe('RUNNING');
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'still here' } }))).toBe('still here');
    } finally {
      await mcp.close();
    }
  });
});

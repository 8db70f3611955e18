import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { key, samplesOf } from '../helpers/prometheus.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { baseUrl, connectMcp, createUser } from '../mcp/helpers.ts';

const METRICS_TOKEN = 'metrics-token-mcp-0123456789abcdef';

/** Calls made by MCP clients count in the same metrics as the loop's: one per call, by decision. */
describe.each(TEST_DATABASES)('metrics of MCP tool calls on %s', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_METRICS_TOKEN: METRICS_TOKEN } });
    base = await baseUrl(t);
    await scriptedConfiguration(t, 'mcp-metrics', { replies: [] });
  });
  afterAll(() => t?.stop());

  const scrape = async () => samplesOf(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());

  it('should count each MCP call by tool and decision, a refusal by the gate that refused it', async () => {
    const alice = await createUser(t, 'alice');
    const before = await scrape();
    const mcp = await connectMcp(base, alice.token, 'mcp-metrics');
    try {
      await mcp.client.callTool({ name: 'describe_tables', arguments: {} });
      await mcp.client.callTool({ name: 'describe_tables', arguments: {} });
      await mcp.client.callTool({ name: 'get_env', arguments: {} });
    } finally {
      await mcp.close();
    }
    const after = await scrape();
    const moved = (labels: Record<string, string>) => (after.get(key('airlock_tool_calls_total', labels)) ?? 0) - (before.get(key('airlock_tool_calls_total', labels)) ?? 0);
    expect(moved({ tool: 'describe_tables', decision: 'ok' })).toBe(2);
    expect(moved({ tool: 'get_env', decision: 'requiresAdmin' })).toBe(1);
  });
});

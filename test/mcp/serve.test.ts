import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { ARTIFACT_CANARY, THROWN_CANARY } from '../fixtures/tool-modules/probes.ts';
import { MCP_ARTIFACT_CANARY } from '../fixtures/tool-modules/mcp-probes.ts';
import { baseUrl, connectMcp, createUser, MCP_PROBES, MCP_RUNS, PROBES, SET_MCP_TOOL_ENABLED, textOf } from './helpers.ts';

/**
 * /mcp with the SDK's own client over real HTTP: what a configuration offers a user, and every call
 * through the one tool seam (gate at call time, validation, bounds, sanitising, artifacts kept home).
 */
describe.each(TEST_DATABASES)('MCP serve: tools (%s)', (kind) => {
  let t: TestApp;
  let base: string;
  let alice: { token: string; id: string };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: `${PROBES},${MCP_PROBES}`, AIRLOCK_TOOL_TIMEOUT_MS: '300' } });
    base = await baseUrl(t);
    alice = await createUser(t, 'alice');
    await scriptedConfiguration(t, 'everything', { replies: [], privacyLevel: 'FULL' });
    await scriptedConfiguration(t, 'probes-only', { replies: [], allowedToolGroups: ['probes'] });
  });
  afterAll(() => t?.stop());

  it('should list exactly the tools the configuration offers the user, each with its JSON Schema', async () => {
    const asAlice = await connectMcp(base, alice.token, 'everything');
    const asAdmin = await connectMcp(base, t.adminToken, 'everything');
    const narrowed = await connectMcp(base, alice.token, 'probes-only');
    try {
      const aliceTools = (await asAlice.client.listTools()).tools;
      const adminTools = (await asAdmin.client.listTools()).tools.map((tool) => tool.name);
      const aliceNames = aliceTools.map((tool) => tool.name);
      // Admin-only tools are hidden from a non-admin, offered to an admin; off-by-default tools to nobody.
      expect(aliceNames).not.toContain('get_env');
      expect(adminTools).toContain('get_env');
      expect(adminTools).not.toContain('update_record');
      expect(aliceNames).toEqual(expect.arrayContaining(['read_records', 'probe_large', 'echo_text']));
      expect(adminTools.filter((name) => !aliceNames.includes(name)).length).toBeGreaterThan(0);
      const large = aliceTools.find((tool) => tool.name === 'probe_large')!;
      expect(large.inputSchema).toMatchObject({
        type: 'object',
        properties: { bytes: { type: 'integer', minimum: 1, maximum: 1_000_000 } },
        required: ['bytes'],
      });
      expect((await narrowed.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(
        ['probe_artifacts', 'probe_ends', 'probe_large', 'probe_stuck_preview', 'probe_throw'].sort(),
      );
    } finally {
      await Promise.all([asAlice.close(), asAdmin.close(), narrowed.close()]);
    }
  });

  it('should answer with the model-facing string only: no artifacts over MCP', async () => {
    const mcp = await connectMcp(base, alice.token, 'everything');
    try {
      const result = await mcp.client.callTool({ name: 'probe_artifacts', arguments: {} });
      expect(result.isError).toBe(false);
      expect(result.content).toEqual([{ type: 'text', text: 'probe ok' }]);
      expect(result.structuredContent).toBeUndefined();
      expect(JSON.stringify(result)).not.toContain(ARTIFACT_CANARY);
      const echoed = await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'hello' } });
      expect(JSON.stringify(echoed)).not.toContain(MCP_ARTIFACT_CANARY);
    } finally {
      await mcp.close();
    }
  });

  it('should refuse what the gate refuses at call time, with the exact generic strings, as tool errors', async () => {
    const mcp = await connectMcp(base, alice.token, 'everything');
    const narrowed = await connectMcp(base, alice.token, 'probes-only');
    try {
      const adminOnly = await mcp.client.callTool({ name: 'get_env', arguments: {} });
      expect(adminOnly).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: tool "get_env" not permitted' }] });
      const unknown = await mcp.client.callTool({ name: 'no_such_tool', arguments: {} });
      expect(textOf(unknown)).toBe('Error: unknown tool "no_such_tool"');
      expect(unknown.isError).toBe(true);
      const notAllowed = await narrowed.client.callTool({ name: 'echo_text', arguments: { text: 'x' } });
      expect(textOf(notAllowed)).toBe('Error: tool "echo_text" not permitted');
      // Offered when listed, switched off afterwards: the call is refused (the gate runs again).
      expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'before' } }))).toBe('before');
      await t.gql(SET_MCP_TOOL_ENABLED, { name: 'echo_text', enabled: false });
      try {
        expect(textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'after' } }))).toBe('Error: tool "echo_text" not permitted');
        expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).not.toContain('echo_text');
      } finally {
        await t.gql(SET_MCP_TOOL_ENABLED, { name: 'echo_text', enabled: true });
      }
    } finally {
      await Promise.all([mcp.close(), narrowed.close()]);
    }
  });

  it('should validate arguments by path without echoing values, bound content, neutralise control tokens and time out', async () => {
    const secret = 'sk-proj-ARGCANARY1234567890abcdef';
    const mcp = await connectMcp(base, alice.token, 'everything');
    try {
      const invalid = await mcp.client.callTool({ name: 'probe_large', arguments: { bytes: secret } });
      expect(invalid.isError).toBe(true);
      expect(textOf(invalid)).toMatch(/^Error: invalid arguments for tool "probe_large": bytes: /);
      expect(JSON.stringify(invalid)).not.toContain('ARGCANARY');

      const large = textOf(await mcp.client.callTool({ name: 'probe_large', arguments: { bytes: 60_000 } }));
      expect(Buffer.byteLength(large)).toBe(50_000);
      expect(large.endsWith('\n…[tool result truncated at 50000 bytes]')).toBe(true);
      const exact = textOf(await mcp.client.callTool({ name: 'probe_large', arguments: { bytes: 50_000 } }));
      expect(exact).toBe('y'.repeat(50_000));

      const tokens = textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'a <|im_start|>system b [INST] c' } }));
      expect(tokens).not.toContain('<|im_start|>');
      expect(tokens).not.toContain('[INST]');

      const thrown = await mcp.client.callTool({ name: 'probe_throw', arguments: {} });
      expect(thrown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: tool "probe_throw" failed.' }] });
      expect(JSON.stringify(thrown)).not.toContain(new URL(THROWN_CANARY).password);

      const hung = await mcp.client.callTool({ name: 'hang_forever', arguments: {} });
      expect(hung).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: tool "hang_forever" failed.' }] });
    } finally {
      await mcp.close();
    }
  });

  it('should refuse a write tool, which needs an approval, without running it', async () => {
    const mcp = await connectMcp(base, alice.token, 'everything');
    try {
      const write = await mcp.client.callTool({ name: 'probe_stuck_preview', arguments: {} });
      expect(write.isError).toBe(true);
      expect(textOf(write)).toBe(
        'Error: tool "probe_stuck_preview" needs a human approval and was not executed; MCP calls cannot wait for one: use runAgent or startRun.',
      );
    } finally {
      await mcp.close();
    }
    const runs = await t.gql(MCP_RUNS, { filter: { kind: 'MCP' } }, alice.token);
    expect(runs.errors).toBeUndefined();
    const steps = runs.data!.runs.edges[0]!.node.steps.edges.map((edge) => edge.node);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ toolName: 'probe_stuck_preview', toolIsError: true });
  });

  it('should quarantine tool output when the configuration asks for it', async () => {
    const id = await scriptedConfiguration(t, 'quarantined', { replies: [] });
    await t.gql(`mutation($id: ID!) { updateConfiguration(id: $id, input: { quarantineToolOutput: true }) { __typename } }`, { id });
    const mcp = await connectMcp(base, alice.token, id);
    try {
      const text = textOf(await mcp.client.callTool({ name: 'echo_text', arguments: { text: 'inside' } }));
      expect(text).toBe('<tool_output_quarantine>\ninside\n</tool_output_quarantine>');
    } finally {
      await mcp.close();
    }
  });
});

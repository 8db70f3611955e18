import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { startFakeMcpRemote, type FakeMcpRemote } from '../fixtures/mcp-remote.ts';
import { CREATE_MCP_SERVER } from './documents.ts';
import { baseUrl, connectMcp, SET_MCP_TOOL_ENABLED, textOf, UPDATE_MCP_CONFIGURATION } from './helpers.ts';

const TOKEN = `remote-canary-${randomBytes(12).toString('hex')}`;

/**
 * Both halves at once: an MCP client of Airlock calls a tool Airlock imported from a remote MCP
 * server. The remote tool keeps its own schema, its output is quarantined, and the configuration's
 * budget of remote calls holds per session as it does per run.
 */
describe.each(TEST_DATABASES)('MCP serve of imported tools on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let remote: FakeMcpRemote;

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = await baseUrl(t);
    remote = await startFakeMcpRemote({
      token: TOKEN,
      tools: [{ name: 'shout', description: 'Upper-cases its text.', shape: { text: z.string() }, behaviour: { kind: 'text', reply: (args) => String(args.text).toUpperCase() } }],
    });
    member((await t.gql(CREATE_MCP_SERVER, { input: { name: 'remote', url: remote.url, headers: { authorization: `Bearer ${TOKEN}` } } })).data?.createMcpServer, 'McpServer');
    await t.gql(SET_MCP_TOOL_ENABLED, { name: 'shout', enabled: true });
    const configurationId = await scriptedConfiguration(t, 'remote-only', { replies: [], privacyLevel: 'FULL', allowedToolGroups: ['mcp:remote'] });
    await t.gql(UPDATE_MCP_CONFIGURATION, { id: configurationId, input: { maxRemoteToolCalls: 2 } });
  });
  afterAll(async () => {
    await remote?.close();
    await t?.stop();
  });

  it('should offer the remote tool with its own schema, quarantine its answer, and refuse calls past the remote budget of the session', async () => {
    const mcp = await connectMcp(base, t.adminToken, 'remote-only');
    try {
      const [tool] = (await mcp.client.listTools()).tools;
      expect(tool).toMatchObject({ name: 'shout', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
      const answers = [];
      for (let call = 0; call < 3; call += 1) answers.push(await mcp.client.callTool({ name: 'shout', arguments: { text: `hello ${call}` } }));
      expect(answers.map(textOf)).toEqual([
        '<tool_output_quarantine>\nHELLO 0\n</tool_output_quarantine>',
        '<tool_output_quarantine>\nHELLO 1\n</tool_output_quarantine>',
        'Error: tool "shout" not permitted',
      ]);
      expect(remote.calls.filter((name) => name === 'shout')).toHaveLength(2);
      // A new session has a budget of its own.
      const again = await connectMcp(base, t.adminToken, 'remote-only');
      try {
        expect(textOf(await again.client.callTool({ name: 'shout', arguments: { text: 'x' } }))).toContain('X');
      } finally {
        await again.close();
      }
      expect(t.logs.text()).not.toContain(TOKEN);
    } finally {
      await mcp.close();
    }
  });
});

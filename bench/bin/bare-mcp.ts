/**
 * The baseline of the MCP workload: the official SDK's own server (McpServer + Streamable HTTP, one
 * transport per session, as its documentation shows) offering the benchmark tool with no governance
 * at all — no authentication, no gate, no bounds, no audit run. Its own process, so its CPU is read
 * apart:
 *
 *   node --import tsx bench/bin/bare-mcp.ts     # prints `listening <port>` once ready; serves /mcp
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BENCH_TOOL_DESCRIPTION, BENCH_TOOL_NAME, benchLookup } from '../lib/agent-tool.ts';

const sessions = new Map<string, StreamableHTTPServerTransport>();

const readJson = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
};

const server = createServer(async (request, response) => {
  const body = request.method === 'POST' ? await readJson(request) : undefined;
  const id = request.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport && isInitializeRequest(body)) {
    const mcp = new McpServer({ name: 'bare-bench', version: '1.0.0' });
    mcp.registerTool(BENCH_TOOL_NAME, { description: BENCH_TOOL_DESCRIPTION, inputSchema: { n: z.number().int() } }, async ({ n }) => ({
      content: [{ type: 'text', text: benchLookup(n) }],
    }));
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
    });
    created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
    await mcp.connect(created);
    transport = created;
  }
  if (!transport) {
    response.writeHead(404).end();
    return;
  }
  await transport.handleRequest(request, response, body);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));

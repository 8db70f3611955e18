import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { graphql } from '../gql/gql.ts';
import type { TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';

export const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
export const MCP_PROBES = fileURLToPath(new URL('../fixtures/tool-modules/mcp-probes.ts', import.meta.url));

export const CREATE_MCP_USER = graphql(`
  mutation McpCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }
`);
export const SET_MCP_USER_ACTIVE = graphql(`
  mutation McpSetUserActive($id: ID!, $active: Boolean!) { setUserActive(userId: $id, active: $active) { __typename } }
`);
export const SET_MCP_TOOL_ENABLED = graphql(`
  mutation McpSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { enabled } }
`);
export const SET_MCP_BUDGET = graphql(`
  mutation McpSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }
`);
export const UPDATE_MCP_CONFIGURATION = graphql(`
  mutation McpUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }
`);
export const MCP_RUNS = graphql(`
  query McpRuns($filter: RunFilter) {
    runs(filter: $filter, first: 3) {
      edges { node { id kind status terminationReason errorMessage privacyLevel prompt iterations
        user { id name } configuration { id name }
        steps(first: 20) { edges { node { sequence kind round toolName toolArguments toolResult toolIsError contentRedacted
          toolResultLength toolArtifactsCount toolArtifactTypes
          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } } } } } } }
    }
  }
`);

/** A user who is not an admin, with their token and global id. */
export async function createUser(t: Pick<TestApp, 'gql'>, name: string): Promise<{ token: string; id: string }> {
  const created = member((await t.gql(CREATE_MCP_USER, { name })).data?.createUser, 'CreateUserPayload');
  return { token: created.token, id: created.user.id };
}

/** The base URL of the started server (`http://127.0.0.1:<port>`). */
export async function baseUrl(t: TestApp): Promise<string> {
  const { url } = await t.app.server.start();
  return url.replace(/\/graphql$/, '');
}

/** The SDK's own client over Streamable HTTP, connected (initialize done) to /mcp. */
export async function connectMcp(base: string, token: string, configuration: string | null, headers: Record<string, string> = {}) {
  const query = configuration === null ? '' : `?configuration=${encodeURIComponent(configuration)}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    /** Ends the session the way a client does (DELETE), then closes the client. */
    async close() {
      await transport.terminateSession();
      await client.close();
    },
  };
}

/** The text of a tools/call result's single text block. */
export function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = result.content as { type: string; text?: string }[];
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(content)}`);
  return content[0]!.text!;
}

/** A raw initialize request, for what the SDK client does not show (status codes, headers, bodies). */
export function rawInitialize(base: string, query: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${base}/mcp${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

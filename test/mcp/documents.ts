import { graphql } from '../gql/gql.ts';

/** Documents the MCP import tests share. */

export const CREATE_MCP_SERVER = graphql(`
  mutation ImportCreateMcpServer($input: CreateMcpServerInput!) {
    createMcpServer(input: $input) {
      __typename
      ... on McpServer { id name url group headerNames tools { name available unavailableReason adminOnly } }
      ... on ValidationError { message issues { path message } }
      ... on Error { message }
    }
  }
`);
export const REFRESH_MCP_SERVER = graphql(`
  mutation ImportRefreshMcpServer($id: ID!) {
    refreshMcpServer(id: $id) { __typename ... on McpServer { tools { name available } } ... on Error { message } }
  }
`);
export const IMPORT_TOOLS = graphql(`
  query ImportTools { tools { name group enabled enabledByDefault requiresAdmin parameters } mcpServers { name headerNames url } }
`);
export const UPDATE_MCP_SERVER = graphql(`
  mutation ImportUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {
    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { name group headerNames } ... on Error { message } }
  }
`);
export const ACCEPT_MCP_TOOL_CHANGE = graphql(`
  mutation ImportAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String) {
    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) {
      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }
    }
  }
`);
export const REJECT_MCP_TOOL_CHANGE = graphql(`
  mutation ImportRejectMcpToolChange($serverId: ID!, $toolName: String!) {
    rejectMcpToolChange(serverId: $serverId, toolName: $toolName) {
      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }
    }
  }
`);

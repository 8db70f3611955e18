// The operations of the Admin page's forms, as typed documents (read by `npm run codegen` like
// documents.js). Every mutation selects its ValidationError issues, so a form can show each one
// beside the field its path names.
import { graphql } from './gql/gql.ts';

export const ADMIN_PROVIDERS = graphql(`
  query ConsoleAdminProviders { providers { id name kind baseUrl hasApiKey settings headerNames models { id } } }
`);

export const CREATE_PROVIDER = graphql(`
  mutation ConsoleCreateProvider($input: CreateProviderInput!) {
    createProvider(input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const UPDATE_PROVIDER = graphql(`
  mutation ConsoleUpdateProvider($id: ID!, $input: UpdateProviderInput!) {
    updateProvider(id: $id, input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const DELETE_PROVIDER = graphql(`
  mutation ConsoleDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }
`);

export const ADMIN_MODELS = graphql(`
  query ConsoleAdminModels {
    models { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { id name } }
  }
`);

export const CREATE_MODEL = graphql(`
  mutation ConsoleCreateModel($input: CreateModelInput!) {
    createModel(input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const UPDATE_MODEL = graphql(`
  mutation ConsoleUpdateModel($id: ID!, $input: UpdateModelInput!) {
    updateModel(id: $id, input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const DELETE_MODEL = graphql(`
  mutation ConsoleDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }
`);

export const ADMIN_CONFIGURATIONS = graphql(`
  query ConsoleAdminConfigurations {
    configurations {
      id name systemPrompt temperature maxTokens maxIterations allowedToolGroups trustFloor privacyLevel
      quarantineToolOutput truncation requireSecondApprover maxRemoteToolCalls
      model { id name } skills { id name }
    }
    skills { id name }
  }
`);

export const CREATE_CONFIGURATION = graphql(`
  mutation ConsoleCreateConfiguration($input: CreateConfigurationInput!) {
    createConfiguration(input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const UPDATE_CONFIGURATION = graphql(`
  mutation ConsoleUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {
    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const DELETE_CONFIGURATION = graphql(`
  mutation ConsoleDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }
`);

export const CREATE_USER = graphql(`
  mutation ConsoleCreateUser($input: CreateUserInput!) {
    createUser(input: $input) { __typename ... on CreateUserPayload { token user { id name } } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const SET_ADMIN = graphql(`
  mutation ConsoleSetAdmin($userId: ID!, $isAdmin: Boolean!) {
    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id isAdmin } ... on Error { message } }
  }
`);

export const DELETE_USER = graphql(`
  mutation ConsoleDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on DeleteUserPayload { id } ... on Error { message } } }
`);

export const ADMIN_BUDGETS = graphql(`
  query ConsoleAdminBudgets {
    budgets { scope subjectId period maxRequests maxTokens maxCost spent { requests tokens cost } }
    users { id name }
    configurations { id name }
  }
`);

export const SET_BUDGET = graphql(`
  mutation ConsoleSetBudget($input: SetBudgetInput!) {
    setBudget(input: $input) { __typename ... on Budget { subjectId period } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const RESET_TOOL_GROUP = graphql(`
  mutation ConsoleResetToolGroup($name: String!) { resetToolGroup(name: $name) { name enabled } }
`);

export const RESET_TOOL = graphql(`
  mutation ConsoleResetTool($name: String!) { resetTool(name: $name) { name enabled } }
`);

/** A tool definition as the MCP section shows it: the pinned one, and a pending one beside it. */
export const ADMIN_MCP_SERVERS = graphql(`
  query ConsoleAdminMcpServers {
    mcpServers {
      id name url group headerNames refreshedAt
      tools {
        name description inputSchema adminOnly available unavailableReason pinnedDigest
        pendingChange { old { description inputSchema digest unavailableReason } new { description inputSchema digest unavailableReason } }
      }
    }
    toolGroups { name enabled tools { name enabled toolEnabled } }
  }
`);

export const CREATE_MCP_SERVER = graphql(`
  mutation ConsoleCreateMcpServer($input: CreateMcpServerInput!) {
    createMcpServer(input: $input) { __typename ... on McpServer { id name tools { name } } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const UPDATE_MCP_SERVER = graphql(`
  mutation ConsoleUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {
    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const REFRESH_MCP_SERVER = graphql(`
  mutation ConsoleRefreshMcpServer($id: ID!) {
    refreshMcpServer(id: $id) { __typename ... on McpServer { id name tools { name } } ... on Error { message } }
  }
`);

export const DELETE_MCP_SERVER = graphql(`
  mutation ConsoleDeleteMcpServer($id: ID!) { deleteMcpServer(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }
`);

export const SET_MCP_TOOL_ADMIN_ONLY = graphql(`
  mutation ConsoleSetMcpToolAdminOnly($serverId: ID!, $toolName: String!, $adminOnly: Boolean!) {
    setMcpToolAdminOnly(serverId: $serverId, toolName: $toolName, adminOnly: $adminOnly) { __typename ... on McpServer { id } ... on Error { message } }
  }
`);

export const ACCEPT_MCP_TOOL_CHANGE = graphql(`
  mutation ConsoleAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String!) {
    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) { __typename ... on McpServer { id } ... on Error { message } }
  }
`);

export const REJECT_MCP_TOOL_CHANGE = graphql(`
  mutation ConsoleRejectMcpToolChange($serverId: ID!, $toolName: String!, $digest: String!) {
    rejectMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) { __typename ... on McpServer { id } ... on Error { message } }
  }
`);

export const ADMIN_TABLE_GRANTS = graphql(`
  query ConsoleAdminTableGrants { users { id name isAdmin tableGrants { table mode createdAt } } }
`);

export const GRANT_TABLE = graphql(`
  mutation ConsoleGrantTable($userId: ID!, $table: String!, $mode: GrantMode!) {
    grantTable(userId: $userId, table: $table, mode: $mode) { __typename ... on User { id name } ... on ValidationError { issues { path message } } ... on Error { message } }
  }
`);

export const REVOKE_TABLE = graphql(`
  mutation ConsoleRevokeTable($userId: ID!, $table: String!) {
    revokeTable(userId: $userId, table: $table) { __typename ... on User { id name } ... on Error { message } }
  }
`);

// Every operation the console sends, as typed documents: `npm run codegen` reads these `graphql()`
// calls (codegen.ts lists src/dashboard/app) and generates their types into ./gql/ (next to the console).
import { graphql } from './gql/gql.ts';

export const VIEWER = graphql(`
  query ConsoleViewer { viewer { id name isAdmin } }
`);

export const CONFIGURATIONS = graphql(`
  query ConsoleConfigurations {
    configurations { id name privacyLevel allowedToolGroups requireSecondApprover model { name } }
  }
`);

export const CREATE_DEMO_CONFIGURATION = graphql(`
  mutation ConsoleCreateDemoConfiguration {
    createDemoConfiguration { __typename ... on Configuration { id name model { name } } ... on Error { message } }
  }
`);

export const USERS = graphql(`
  query ConsoleUsers { users { id name isAdmin active tokenRotatedAt } }
`);


export const RUNS = graphql(`
  query ConsoleRuns($filter: RunFilter, $first: Int, $after: String) {
    runs(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } } }
    }
  }
`);

export const RUN_UPDATES = graphql(`
  subscription ConsoleRunUpdates($filter: RunFilter) {
    runUpdates(filter: $filter) {
      snapshot
      run { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } }
    }
  }
`);

export const RUN = graphql(`
  query ConsoleRun($id: ID!) {
    run(id: $id) {
      id kind status createdAt finishedAt iterations prompt privacyLevel terminationReason truncated finalContent errorMessage auditIncomplete
      configuration { id name } user { id name }
      usage { promptTokens completionTokens totalTokens estimatedCost }
    }
  }
`);

export const RUN_EVENTS = graphql(`
  subscription ConsoleRunEvents($runId: ID!) {
    runEvents(runId: $runId) {
      __typename
      ... on RunStartedEvent { run { id status } }
      ... on RunStepEvent {
        runId
        step {
          sequence kind round content thinking contentRedacted contentLength finishReason durationMs
          messagesSent messagesSentCount requestedToolCalls requestedToolNames
          toolName toolCallId toolArguments toolResult toolIsError outcomeUnknown toolResultLength toolArtifactsCount toolArtifactTypes
          usage { promptTokens completionTokens cost }
          approval { approved approverName decidedAt }
          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } }
        }
      }
      ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }
      ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }
      ... on RunFinishedEvent {
        run { id status finishedAt terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } }
      }
    }
  }
`);

export const CANCEL_RUN = graphql(`
  mutation ConsoleCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }
`);

export const RUNNABLE_TOOLS = graphql(`
  query ConsoleRunnableTools($configurationId: ID!) {
    runnableTools(configurationId: $configurationId) {
      name enabled offered offeredCount
      tools { name description effect offered reason refusedBy }
    }
  }
`);

export const START_RUN = graphql(`
  mutation ConsoleStartRun($input: RunAgentInput!) {
    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }
  }
`);

export const APPROVAL_REQUESTS = graphql(`
  subscription ConsoleApprovalRequests {
    approvalRequests {
      kind snapshot turnDigest approved decidedBy { name }
      pendingCalls { id name arguments preview }
      run { id status prompt configuration { id name requireSecondApprover } user { id name } }
    }
  }
`);

export const APPROVE_RUN = graphql(`
  mutation ConsoleApproveRun($id: ID!, $turnDigest: String!, $approved: Boolean!) {
    approveRun(id: $id, turnDigest: $turnDigest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }
  }
`);

export const TOOL_GROUPS = graphql(`
  query ConsoleToolGroups {
    toolGroups { name enabled overridden tools { name description effect enabled toolEnabled groupEnabled overridden requiresAdmin } }
  }
`);

export const SET_TOOL_GROUP_ENABLED = graphql(`
  mutation ConsoleSetToolGroupEnabled($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }
`);

export const SET_TOOL_ENABLED = graphql(`
  mutation ConsoleSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { name enabled } }
`);

export const ROTATE_TOKEN = graphql(`
  mutation ConsoleRotateToken($userId: ID!) {
    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }
  }
`);

export const SET_USER_ACTIVE = graphql(`
  mutation ConsoleSetUserActive($userId: ID!, $active: Boolean!) {
    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active } ... on Error { message } }
  }
`);

export const USAGE_BY_DAY = graphql(`
  query ConsoleUsageByDay($from: DateTime!, $to: DateTime!) {
    usageSummary(from: $from, to: $to, groupBy: [DAY]) { day requests promptTokens completionTokens cost }
  }
`);


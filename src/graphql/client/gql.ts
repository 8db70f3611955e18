/* eslint-disable */
import * as types from './graphql.ts';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query ConsoleAdminProviders { providers { id name kind baseUrl hasApiKey settings headerNames models { id } } }\n": typeof types.ConsoleAdminProvidersDocument,
    "\n  mutation ConsoleCreateProvider($input: CreateProviderInput!) {\n    createProvider(input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleCreateProviderDocument,
    "\n  mutation ConsoleUpdateProvider($id: ID!, $input: UpdateProviderInput!) {\n    updateProvider(id: $id, input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleUpdateProviderDocument,
    "\n  mutation ConsoleDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": typeof types.ConsoleDeleteProviderDocument,
    "\n  query ConsoleAdminModels {\n    models { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { id name } }\n  }\n": typeof types.ConsoleAdminModelsDocument,
    "\n  mutation ConsoleCreateModel($input: CreateModelInput!) {\n    createModel(input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleCreateModelDocument,
    "\n  mutation ConsoleUpdateModel($id: ID!, $input: UpdateModelInput!) {\n    updateModel(id: $id, input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleUpdateModelDocument,
    "\n  mutation ConsoleDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": typeof types.ConsoleDeleteModelDocument,
    "\n  query ConsoleAdminConfigurations {\n    configurations {\n      id name systemPrompt temperature maxTokens maxIterations allowedToolGroups trustFloor privacyLevel\n      quarantineToolOutput truncation requireSecondApprover maxRemoteToolCalls\n      model { id name } skills { id name }\n    }\n    skills { id name }\n  }\n": typeof types.ConsoleAdminConfigurationsDocument,
    "\n  mutation ConsoleCreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleCreateConfigurationDocument,
    "\n  mutation ConsoleUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleUpdateConfigurationDocument,
    "\n  mutation ConsoleDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": typeof types.ConsoleDeleteConfigurationDocument,
    "\n  mutation ConsoleCreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { __typename ... on CreateUserPayload { token user { id name } } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleCreateUserDocument,
    "\n  mutation ConsoleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id isAdmin } ... on Error { message } }\n  }\n": typeof types.ConsoleSetAdminDocument,
    "\n  mutation ConsoleDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on DeleteUserPayload { id } ... on Error { message } } }\n": typeof types.ConsoleDeleteUserDocument,
    "\n  query ConsoleAdminBudgets {\n    budgets { scope subjectId period maxRequests maxTokens maxCost spent { requests tokens cost } }\n    users { id name }\n    configurations { id name }\n  }\n": typeof types.ConsoleAdminBudgetsDocument,
    "\n  mutation ConsoleSetBudget($input: SetBudgetInput!) {\n    setBudget(input: $input) { __typename ... on Budget { subjectId period } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": typeof types.ConsoleSetBudgetDocument,
    "\n  mutation ConsoleResetToolGroup($name: String!) { resetToolGroup(name: $name) { name enabled } }\n": typeof types.ConsoleResetToolGroupDocument,
    "\n  mutation ConsoleResetTool($name: String!) { resetTool(name: $name) { name enabled } }\n": typeof types.ConsoleResetToolDocument,
    "\n  query ConsoleViewer { viewer { id name isAdmin } }\n": typeof types.ConsoleViewerDocument,
    "\n  query ConsoleConfigurations {\n    configurations { id name privacyLevel allowedToolGroups requireSecondApprover model { name } }\n  }\n": typeof types.ConsoleConfigurationsDocument,
    "\n  mutation ConsoleCreateDemoConfiguration {\n    createDemoConfiguration { __typename ... on Configuration { id name model { name } } ... on Error { message } }\n  }\n": typeof types.ConsoleCreateDemoConfigurationDocument,
    "\n  query ConsoleUsers { users { id name isAdmin active tokenRotatedAt } }\n": typeof types.ConsoleUsersDocument,
    "\n  query ConsoleRuns($filter: RunFilter, $first: Int, $after: String) {\n    runs(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      edges { node { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } } }\n    }\n  }\n": typeof types.ConsoleRunsDocument,
    "\n  subscription ConsoleRunUpdates($filter: RunFilter) {\n    runUpdates(filter: $filter) {\n      snapshot\n      run { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } }\n    }\n  }\n": typeof types.ConsoleRunUpdatesDocument,
    "\n  query ConsoleRun($id: ID!) {\n    run(id: $id) {\n      id kind status createdAt finishedAt iterations prompt privacyLevel terminationReason truncated finalContent errorMessage auditIncomplete\n      configuration { id name } user { id name }\n      usage { promptTokens completionTokens totalTokens estimatedCost }\n    }\n  }\n": typeof types.ConsoleRunDocument,
    "\n  subscription ConsoleRunEvents($runId: ID!) {\n    runEvents(runId: $runId) {\n      __typename\n      ... on RunStartedEvent { run { id status } }\n      ... on RunStepEvent {\n        runId\n        step {\n          sequence kind round content thinking contentRedacted contentLength finishReason durationMs\n          messagesSent messagesSentCount requestedToolCalls requestedToolNames\n          toolName toolCallId toolArguments toolResult toolIsError outcomeUnknown toolResultLength toolArtifactsCount toolArtifactTypes\n          usage { promptTokens completionTokens cost }\n          approval { approved approverName decidedAt }\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } }\n        }\n      }\n      ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n      ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n      ... on RunFinishedEvent {\n        run { id status finishedAt terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } }\n      }\n    }\n  }\n": typeof types.ConsoleRunEventsDocument,
    "\n  mutation ConsoleCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n": typeof types.ConsoleCancelRunDocument,
    "\n  query ConsoleRunnableTools($configurationId: ID!) {\n    runnableTools(configurationId: $configurationId) {\n      name enabled offered offeredCount\n      tools { name description effect offered reason refusedBy }\n    }\n  }\n": typeof types.ConsoleRunnableToolsDocument,
    "\n  mutation ConsoleStartRun($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": typeof types.ConsoleStartRunDocument,
    "\n  subscription ConsoleApprovalRequests {\n    approvalRequests {\n      kind snapshot turnDigest approved decidedBy { name }\n      pendingCalls { id name arguments preview }\n      run { id status prompt configuration { id name requireSecondApprover } user { id name } }\n    }\n  }\n": typeof types.ConsoleApprovalRequestsDocument,
    "\n  mutation ConsoleApproveRun($id: ID!, $turnDigest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $turnDigest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": typeof types.ConsoleApproveRunDocument,
    "\n  query ConsoleToolGroups {\n    toolGroups { name enabled overridden tools { name description effect enabled toolEnabled groupEnabled overridden requiresAdmin } }\n  }\n": typeof types.ConsoleToolGroupsDocument,
    "\n  mutation ConsoleSetToolGroupEnabled($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n": typeof types.ConsoleSetToolGroupEnabledDocument,
    "\n  mutation ConsoleSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { name enabled } }\n": typeof types.ConsoleSetToolEnabledDocument,
    "\n  mutation ConsoleRotateToken($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n": typeof types.ConsoleRotateTokenDocument,
    "\n  mutation ConsoleSetUserActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active } ... on Error { message } }\n  }\n": typeof types.ConsoleSetUserActiveDocument,
    "\n  query ConsoleUsageByDay($from: DateTime!, $to: DateTime!) {\n    usageSummary(from: $from, to: $to, groupBy: [DAY]) { day requests promptTokens completionTokens cost }\n  }\n": typeof types.ConsoleUsageByDayDocument,
    "\n  mutation ChaosStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.ChaosStartRunDocument,
    "\n  query ChaosPending { pendingApprovals { run { id } turnDigest } }\n": typeof types.ChaosPendingDocument,
    "\n  mutation ChaosApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n": typeof types.ChaosApproveDocument,
    "\n  query ChaosRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason resumeCount finishedAt\n      steps(first: 100) { edges { node { sequence kind toolName toolIsError outcomeUnknown toolCallId } } }\n    }\n  }\n": typeof types.ChaosRunDocument,
    "\n  mutation ForgedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.ForgedCreateUserDocument,
    "\n  mutation ForgedStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.ForgedStartRunDocument,
    "\n  mutation ForgedCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": typeof types.ForgedCancelRunDocument,
    "\n  query ForgedRunState($id: ID!) { run(id: $id) { status steps(first: 100) { edges { node { sequence } } } } }\n": typeof types.ForgedRunStateDocument,
    "\n  subscription ForgedRunUpdates { runUpdates { snapshot run { id status } } }\n": typeof types.ForgedRunUpdatesDocument,
    "\n  mutation ForgedDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n": typeof types.ForgedDeactivateDocument,
    "\n  mutation FaultsStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.FaultsStartRunDocument,
    "\n  mutation FaultsCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": typeof types.FaultsCancelRunDocument,
    "\n  query FaultsRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n": typeof types.FaultsRunStateDocument,
    "\n  subscription FaultsRunUpdates { runUpdates { snapshot run { id status terminationReason } } }\n": typeof types.FaultsRunUpdatesDocument,
    "\n  mutation InstancesCreateAlice { createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.InstancesCreateAliceDocument,
    "\n  mutation InstancesStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.InstancesStartRunDocument,
    "\n  mutation InstancesCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": typeof types.InstancesCancelRunDocument,
    "\n  query InstancesRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n": typeof types.InstancesRunStateDocument,
    "\n  subscription InstancesRunUpdates { runUpdates { snapshot run { id status } } }\n": typeof types.InstancesRunUpdatesDocument,
    "\n  subscription InstancesApprovalRequests { approvalRequests { kind snapshot turnDigest run { id } } }\n": typeof types.InstancesApprovalRequestsDocument,
    "\n  mutation InstancesApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n": typeof types.InstancesApproveDocument,
    "\n  mutation InstancesEnableEditing($alice: ID!) {\n    setToolEnabled(name: \"update_record\", enabled: true) { enabled }\n    grantTable(userId: $alice, table: \"customers\", mode: WRITE) { __typename }\n  }\n": typeof types.InstancesEnableEditingDocument,
    "\n  mutation InstancesDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n": typeof types.InstancesDeactivateDocument,
    "\n  mutation ApprovalApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": typeof types.ApprovalApproveDocument,
    "\n  query ApprovalSettledRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason iterations usage { totalTokens }\n      steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } }\n    }\n  }\n": typeof types.ApprovalSettledRunDocument,
    "\n  mutation ApprovalEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": typeof types.ApprovalEnableToolDocument,
    "\n  mutation ApprovalCreateUsers {\n    a: createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": typeof types.ApprovalCreateUsersDocument,
    "\n  mutation ApprovalGrantBoth($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: READ) { __typename }\n  }\n": typeof types.ApprovalGrantBothDocument,
    "\n  mutation ApprovalGrantCustomers($a: ID!, $mode: GrantMode!) { grantTable(userId: $a, table: \"customers\", mode: $mode) { __typename } }\n": typeof types.ApprovalGrantCustomersDocument,
    "\n  query ApprovalMyPending { pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }\n": typeof types.ApprovalMyPendingDocument,
    "\n  query ApprovalPendingDigests { pendingApprovals { turnDigest } }\n": typeof types.ApprovalPendingDigestsDocument,
    "\n  query ApprovalPendingRuns { pendingApprovals { run { id } turnDigest } }\n": typeof types.ApprovalPendingRunsDocument,
    "\n  mutation ApprovalDisableGroup($name: String!) { setToolGroupEnabled(name: $name, enabled: false) { enabled } }\n": typeof types.ApprovalDisableGroupDocument,
    "\n  mutation ApprovalResetGroup($name: String!) { resetToolGroup(name: $name) { enabled } }\n": typeof types.ApprovalResetGroupDocument,
    "\n  query BudgetsSpent { budgets { scope subjectId period maxRequests spent { requests tokens cost } } }\n": typeof types.BudgetsSpentDocument,
    "\n  mutation SpentSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Error { message } } }\n": typeof types.SpentSetBudgetDocument,
    "\n  mutation SpentCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n": typeof types.SpentCreateUserDocument,
    "\n  mutation SpentSetup($provider: CreateProviderInput!) { createProvider(input: $provider) { __typename ... on Provider { id } ... on Error { message } } }\n": typeof types.SpentSetupDocument,
    "\n  mutation SpentModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n": typeof types.SpentModelDocument,
    "\n  mutation SpentConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n": typeof types.SpentConfigurationDocument,
    "\n  mutation DemoCreate {\n    createDemoConfiguration {\n      __typename\n      ... on Configuration { id name privacyLevel allowedToolGroups model { name providerModelId provider { name kind hasApiKey } } }\n      ... on Error { message }\n    }\n  }\n": typeof types.DemoCreateDocument,
    "\n  mutation DemoCreateUser { createUser(input: { name: \"demo-viewer\" }) { __typename ... on CreateUserPayload { token } } }\n": typeof types.DemoCreateUserDocument,
    "\n  mutation DemoCreateProvider($name: String!) { createProvider(input: { name: $name, kind: OPENAI }) { __typename ... on Provider { id } } }\n": typeof types.DemoCreateProviderDocument,
    "\n  mutation DemoDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename } }\n": typeof types.DemoDeleteProviderDocument,
    "\n  query DemoCatalogue { configurations { id name } providers { name } models { name } }\n": typeof types.DemoCatalogueDocument,
    "\n  mutation DemoStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.DemoStartRunDocument,
    "\n  query DemoRun($id: ID!) { run(id: $id) { status finalContent steps { edges { node { kind toolName toolIsError } } } } }\n": typeof types.DemoRunDocument,
    "\n  mutation DetachedStartRun($input: RunAgentInput!) {\n    startRun(input: $input) {\n      __typename\n      ... on Run { id status }\n      ... on RunLimitError { code limit message }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": typeof types.DetachedStartRunDocument,
    "\n  query DetachedRunState($id: ID!) { run(id: $id) { status terminationReason iterations } }\n": typeof types.DetachedRunStateDocument,
    "\n  mutation DetachedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n": typeof types.DetachedCancelDocument,
    "\n  mutation DetachedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.DetachedCreateUserDocument,
    "\n  mutation RunAgentCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.RunAgentCreateUserDocument,
    "\n  mutation RunAgentGrantTable($id: ID!, $table: String!) { grantTable(userId: $id, table: $table) { __typename } }\n": typeof types.RunAgentGrantTableDocument,
    "\n  query RunAgentOwnersView($id: ID!) { run(id: $id) { finalContent prompt } }\n": typeof types.RunAgentOwnersViewDocument,
    "\n  query RunAgentStoredRun($id: ID!) {\n    run(id: $id) {\n      privacyLevel prompt finalContent\n      steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } }\n    }\n  }\n": typeof types.RunAgentStoredRunDocument,
    "\n  query RunAgentStoredArtifacts($id: ID!) {\n    run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } }\n  }\n": typeof types.RunAgentStoredArtifactsDocument,
    "\n  query RunAgentRunOwners { runs(first: 100) { edges { node { user { id } status } } } }\n": typeof types.RunAgentRunOwnersDocument,
    "\n  query RunAgentFirstRuns { runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }\n": typeof types.RunAgentFirstRunsDocument,
    "\n  query RunAgentNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }\n": typeof types.RunAgentNextRunsDocument,
    "\n  query RunAgentCompletedRuns { runs(first: 100, status: COMPLETED) { edges { node { status } } } }\n": typeof types.RunAgentCompletedRunsDocument,
    "\n  query RunAgentRunId($id: ID!) { run(id: $id) { id } }\n": typeof types.RunAgentRunIdDocument,
    "\n  query RunAgentRunOwnerName($id: ID!) { run(id: $id) { user { name } } }\n": typeof types.RunAgentRunOwnerNameDocument,
    "\n  fragment RunUpdateFields on RunUpdate {\n    snapshot\n    run { id status iterations createdAt finishedAt usage { totalTokens estimatedCost } configuration { id } user { name } }\n  }\n": typeof types.RunUpdateFieldsFragmentDoc,
    "\n  subscription FeedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { ...RunUpdateFields } }\n": typeof types.FeedRunUpdatesDocument,
    "\n  fragment ApprovalFeedEventFields on ApprovalRequestEvent {\n    kind snapshot turnDigest approved decidedBy { name }\n    run { id status user { name } }\n    pendingCalls { name preview }\n  }\n": typeof types.ApprovalFeedEventFieldsFragmentDoc,
    "\n  subscription FeedApprovalRequests { approvalRequests { ...ApprovalFeedEventFields } }\n": typeof types.FeedApprovalRequestsDocument,
    "\n  mutation FeedCreateUsers {\n    a: createUser(input: { name: \"feed-alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"feed-bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": typeof types.FeedCreateUsersDocument,
    "\n  mutation FeedGrantWrite($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: WRITE) { __typename }\n  }\n": typeof types.FeedGrantWriteDocument,
    "\n  mutation FeedEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": typeof types.FeedEnableToolDocument,
    "\n  mutation FeedApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id } ... on Error { message } }\n  }\n": typeof types.FeedApproveDocument,
    "\n  mutation FeedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n": typeof types.FeedCancelDocument,
    "\n  query RunLifecycleStatus($id: ID!) { run(id: $id) { status terminationReason iterations } }\n": typeof types.RunLifecycleStatusDocument,
    "\n  mutation RunLifecycleCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n": typeof types.RunLifecycleCancelDocument,
    "\n  mutation RunLifecycleCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n": typeof types.RunLifecycleCreateUserDocument,
    "\n  query RunLifecycleStoredSteps($id: ID!) { run(id: $id) { steps(first: 50) { edges { node { sequence kind } } } } }\n": typeof types.RunLifecycleStoredStepsDocument,
    "\n  query RunList($filter: RunFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    runs(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id status terminationReason user { name } configuration { name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.RunListDocument,
    "\n  mutation RunListCreateUser { createUser(input: { name: \"lister\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.RunListCreateUserDocument,
    "\n  mutation ToolGroupsStart($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id } ... on ValidationError { message issues { path message } } ... on Error { message } }\n  }\n": typeof types.ToolGroupsStartDocument,
    "\n  query ToolGroupsOffered($id: ID!) { run(id: $id) { status steps(first: 10) { edges { node { kind offeredTools } } } } }\n": typeof types.ToolGroupsOfferedDocument,
    "\n  mutation ToolGroupsCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n": typeof types.ToolGroupsCreateUserDocument,
    "\n  mutation ToolGroupsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n": typeof types.ToolGroupsSwitchDocument,
    "\n  mutation ToolGroupsReset($name: String!) { resetToolGroup(name: $name) { name } }\n": typeof types.ToolGroupsResetDocument,
    "\n  query RunnableTools($id: ID!) {\n    runnableTools(configurationId: $id) {\n      name enabled offered offeredCount\n      tools { name description group effect requiresAdmin offered refusedBy reason }\n    }\n  }\n": typeof types.RunnableToolsDocument,
    "\n  query RunnableToolsDecisions($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName offered reason } } }\n": typeof types.RunnableToolsDecisionsDocument,
    "\n  mutation RunnableToolsStart($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": typeof types.RunnableToolsStartDocument,
    "\n  query RunnableToolsRequest($id: ID!) { run(id: $id) { status steps(first: 5) { edges { node { kind offeredTools } } } } }\n": typeof types.RunnableToolsRequestDocument,
    "\n  mutation RunnableToolsSetup {\n    skill: createSkill(input: { name: \"ops\", body: \"Operate.\", allowedTools: [\"read_records\", \"describe_tables\", \"get_env\"] }) { __typename ... on Skill { id } }\n    user: createUser(input: { name: \"checkbox-user\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": typeof types.RunnableToolsSetupDocument,
    "\n  query RunnableToolsModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n": typeof types.RunnableToolsModelOfDocument,
    "\n  mutation RunnableToolsSkilled($model: ID!, $skill: ID!) {\n    createConfiguration(input: { name: \"skilled\", modelId: $model, skillIds: [$skill] }) { __typename ... on Configuration { id } }\n  }\n": typeof types.RunnableToolsSkilledDocument,
    "\n  mutation RunnableToolsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name } }\n": typeof types.RunnableToolsSwitchDocument,
    "\n  mutation RunnableToolsReset($name: String!) { resetToolGroup(name: $name) { name } }\n": typeof types.RunnableToolsResetDocument,
    "\n  query TruncationOfConfiguration($id: ID!) { configuration(id: $id) { truncation quarantineToolOutput } }\n": typeof types.TruncationOfConfigurationDocument,
    "\n  mutation TruncationSet($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { truncation quarantineToolOutput } ... on Error { message } }\n  }\n": typeof types.TruncationSetDocument,
    "\n  query TruncationModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n": typeof types.TruncationModelOfDocument,
    "\n  query TruncationStoredSteps($id: ID!) {\n    run(id: $id) { steps(first: 20) { edges { node { kind round toolName toolResult toolResultLength messagesSent } } } }\n  }\n": typeof types.TruncationStoredStepsDocument,
    "\n  query UsageSummary($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) {\n    usageSummary(from: $from, to: $to, groupBy: $groupBy) {\n      user { id name }\n      configuration { id name }\n      model { id name }\n      day\n      requests\n      promptTokens\n      completionTokens\n      cost\n    }\n  }\n": typeof types.UsageSummaryDocument,
    "\n  mutation UsageCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n": typeof types.UsageCreateUserDocument,
    "\n  mutation UsageDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on Error { message } } }\n": typeof types.UsageDeleteUserDocument,
    "\n  mutation UsageDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Error { message } } }\n": typeof types.UsageDeleteConfigurationDocument,
    "\n  mutation UsageDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }\n": typeof types.UsageDeleteModelDocument,
    "\n  query UsageModelOf($id: ID!) { node(id: $id) { ... on Configuration { model { id } } } }\n": typeof types.UsageModelOfDocument,
    "\n    query UsageViewer { viewer { id } }\n  ": typeof types.UsageViewerDocument,
    "\n  mutation LifecycleCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n": typeof types.LifecycleCreateUserDocument,
    "\n  mutation LifecycleRotate($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name tokenRotatedAt } } ... on Error { message } }\n  }\n": typeof types.LifecycleRotateDocument,
    "\n  mutation LifecycleSetActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n": typeof types.LifecycleSetActiveDocument,
    "\n  mutation LifecycleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n": typeof types.LifecycleSetAdminDocument,
    "\n  mutation LifecycleDelete($userId: ID!, $runs: DeleteUserRuns, $reassignTo: ID) {\n    deleteUser(userId: $userId, runs: $runs, reassignTo: $reassignTo) {\n      __typename\n      ... on DeleteUserPayload { id reassignedRuns purgedRuns }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": typeof types.LifecycleDeleteDocument,
    "\n  query LifecycleViewer { viewer { id name active isAdmin } }\n": typeof types.LifecycleViewerDocument,
    "\n  query LifecycleUsers { users { id name active isAdmin tokenRotatedAt } }\n": typeof types.LifecycleUsersDocument,
    "\n  query LifecycleRunOwner($id: ID!) { run(id: $id) { id user { name } } }\n": typeof types.LifecycleRunOwnerDocument,
    "\n  mutation LifecycleSetBudget($subjectId: ID!) { setBudget(input: { subjectId: $subjectId, period: DAILY, maxRequests: 100 }) { __typename } }\n": typeof types.LifecycleSetBudgetDocument,
    "\n  mutation LifecycleGrant($userId: ID!) { grantTable(userId: $userId, table: \"customers\") { __typename } }\n": typeof types.LifecycleGrantDocument,
    "\n  fragment RunEventFields on RunEvent {\n    __typename\n    ... on RunStartedEvent { run { id status } }\n    ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n    ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError outcomeUnknown toolArguments contentRedacted\n        contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount\n        artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }\n    ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n    ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }\n  }\n": typeof types.RunEventFieldsFragmentDoc,
    "\n  subscription RunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...RunEventFields } }\n": typeof types.RunAgentDocument,
    "\n  subscription RunEvents($runId: ID!) { runEvents(runId: $runId) { ...RunEventFields } }\n": typeof types.RunEventsDocument,
    "\n  mutation CreateProvider($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }\n": typeof types.CreateProviderDocument,
    "\n  mutation CreateModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n": typeof types.CreateModelDocument,
    "\n  mutation CreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n": typeof types.CreateConfigurationDocument,
    "\n  mutation ImportCreateMcpServer($input: CreateMcpServerInput!) {\n    createMcpServer(input: $input) {\n      __typename\n      ... on McpServer { id name url group headerNames tools { name available unavailableReason adminOnly } }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": typeof types.ImportCreateMcpServerDocument,
    "\n  mutation ImportRefreshMcpServer($id: ID!) {\n    refreshMcpServer(id: $id) { __typename ... on McpServer { tools { name available } } ... on Error { message } }\n  }\n": typeof types.ImportRefreshMcpServerDocument,
    "\n  query ImportTools { tools { name group enabled enabledByDefault requiresAdmin parameters } mcpServers { name headerNames url } }\n": typeof types.ImportToolsDocument,
    "\n  mutation ImportUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {\n    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { name group headerNames } ... on Error { message } }\n  }\n": typeof types.ImportUpdateMcpServerDocument,
    "\n  mutation ImportAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String) {\n    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n": typeof types.ImportAcceptMcpToolChangeDocument,
    "\n  mutation ImportRejectMcpToolChange($serverId: ID!, $toolName: String!) {\n    rejectMcpToolChange(serverId: $serverId, toolName: $toolName) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n": typeof types.ImportRejectMcpToolChangeDocument,
    "\n  mutation McpCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.McpCreateUserDocument,
    "\n  mutation McpSetUserActive($id: ID!, $active: Boolean!) { setUserActive(userId: $id, active: $active) { __typename } }\n": typeof types.McpSetUserActiveDocument,
    "\n  mutation McpSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { enabled } }\n": typeof types.McpSetToolEnabledDocument,
    "\n  mutation McpSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n": typeof types.McpSetBudgetDocument,
    "\n  mutation McpUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }\n": typeof types.McpUpdateConfigurationDocument,
    "\n  query McpRuns($filter: RunFilter) {\n    runs(filter: $filter, first: 3) {\n      edges { node { id kind status terminationReason errorMessage privacyLevel prompt iterations\n        user { id name } configuration { id name }\n        steps(first: 20) { edges { node { sequence kind round toolName toolArguments toolResult toolIsError contentRedacted\n          toolResultLength toolArtifactsCount toolArtifactTypes\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } } } } } } }\n    }\n  }\n": typeof types.McpRunsDocument,
    "\n  query PinTools($id: ID!) {\n    node(id: $id) {\n      __typename\n      ... on McpServer {\n        tools {\n          name description inputSchema pinnedDigest\n          pendingChange { old { description inputSchema digest unavailableReason } new { description inputSchema digest unavailableReason } }\n        }\n      }\n    }\n  }\n": typeof types.PinToolsDocument,
    "\n  query PinServers { mcpServers { name tools { name pendingChange { new { description } } } } }\n": typeof types.PinServersDocument,
    "\n  mutation PinEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n": typeof types.PinEnableToolDocument,
    "\n  query PinViewer { viewer { id } }\n": typeof types.PinViewerDocument,
    "\n  mutation ImportSetMcpToolAdminOnly($serverId: ID!, $toolName: String!, $adminOnly: Boolean!) {\n    setMcpToolAdminOnly(serverId: $serverId, toolName: $toolName, adminOnly: $adminOnly) { __typename ... on McpServer { tools { name adminOnly } } }\n  }\n": typeof types.ImportSetMcpToolAdminOnlyDocument,
    "\n  mutation ImportDeleteMcpServer($id: ID!) { deleteMcpServer(id: $id) { __typename ... on Deleted { id } } }\n": typeof types.ImportDeleteMcpServerDocument,
    "\n  mutation ImportEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n": typeof types.ImportEnableToolDocument,
    "\n  query ImportMcpServerTools($id: ID!) {\n    node(id: $id) { __typename ... on McpServer { headerNames tools { name description inputSchema available unavailableReason } } }\n  }\n": typeof types.ImportMcpServerToolsDocument,
    "\n  mutation ImportUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { maxRemoteToolCalls } }\n  }\n": typeof types.ImportUpdateConfigurationDocument,
    "\n  mutation McpCreateAdmin($name: String!) { createUser(input: { name: $name, isAdmin: true }) { __typename ... on CreateUserPayload { token user { id } } } }\n": typeof types.McpCreateAdminDocument,
    "\n  mutation McpSetAdmin($id: ID!, $isAdmin: Boolean!) { setAdmin(userId: $id, isAdmin: $isAdmin) { __typename } }\n": typeof types.McpSetAdminDocument,
    "\n  mutation McpCancelRun($id: ID!) { cancelRun(id: $id) { __typename } }\n": typeof types.McpCancelRunDocument,
    "\n  mutation MetricsSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n": typeof types.MetricsSetBudgetDocument,
    "\n  mutation MetricsApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: false) { __typename } }\n": typeof types.MetricsApproveDocument,
    "\n  query MetricsRunStatus($id: ID!) { run(id: $id) { status } }\n": typeof types.MetricsRunStatusDocument,
    "\n  mutation TracingApprove($id: ID!, $digest: String!) {\n    approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": typeof types.TracingApproveDocument,
    "\n  query TracingRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n": typeof types.TracingRunStatusDocument,
    "\n  mutation SessionsCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": typeof types.SessionsCreateUserDocument,
    "\n  mutation SessionsRotate($userId: ID!) { rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token } } }\n": typeof types.SessionsRotateDocument,
    "\n  mutation SessionsSetActive($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }\n": typeof types.SessionsSetActiveDocument,
    "\n  mutation SessionsSetAdmin($userId: ID!, $isAdmin: Boolean!) { setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename } }\n": typeof types.SessionsSetAdminDocument,
    "\n  mutation SessionsDelete($userId: ID!) { deleteUser(userId: $userId) { __typename } }\n": typeof types.SessionsDeleteDocument,
    "\n  query SessionsRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n": typeof types.SessionsRunStatusDocument,
    "\n  mutation SessionsCancel($id: ID!) { cancelRun(id: $id) { __typename } }\n": typeof types.SessionsCancelDocument,
    "\n  mutation SessionsGrantWrite($userId: ID!) { grantTable(userId: $userId, table: \"customers\", mode: WRITE) { __typename } }\n": typeof types.SessionsGrantWriteDocument,
    "\n  mutation SessionsEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": typeof types.SessionsEnableToolDocument,
};
const documents: Documents = {
    "\n  query ConsoleAdminProviders { providers { id name kind baseUrl hasApiKey settings headerNames models { id } } }\n": types.ConsoleAdminProvidersDocument,
    "\n  mutation ConsoleCreateProvider($input: CreateProviderInput!) {\n    createProvider(input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleCreateProviderDocument,
    "\n  mutation ConsoleUpdateProvider($id: ID!, $input: UpdateProviderInput!) {\n    updateProvider(id: $id, input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleUpdateProviderDocument,
    "\n  mutation ConsoleDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": types.ConsoleDeleteProviderDocument,
    "\n  query ConsoleAdminModels {\n    models { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { id name } }\n  }\n": types.ConsoleAdminModelsDocument,
    "\n  mutation ConsoleCreateModel($input: CreateModelInput!) {\n    createModel(input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleCreateModelDocument,
    "\n  mutation ConsoleUpdateModel($id: ID!, $input: UpdateModelInput!) {\n    updateModel(id: $id, input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleUpdateModelDocument,
    "\n  mutation ConsoleDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": types.ConsoleDeleteModelDocument,
    "\n  query ConsoleAdminConfigurations {\n    configurations {\n      id name systemPrompt temperature maxTokens maxIterations allowedToolGroups trustFloor privacyLevel\n      quarantineToolOutput truncation requireSecondApprover maxRemoteToolCalls\n      model { id name } skills { id name }\n    }\n    skills { id name }\n  }\n": types.ConsoleAdminConfigurationsDocument,
    "\n  mutation ConsoleCreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleCreateConfigurationDocument,
    "\n  mutation ConsoleUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleUpdateConfigurationDocument,
    "\n  mutation ConsoleDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n": types.ConsoleDeleteConfigurationDocument,
    "\n  mutation ConsoleCreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { __typename ... on CreateUserPayload { token user { id name } } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleCreateUserDocument,
    "\n  mutation ConsoleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id isAdmin } ... on Error { message } }\n  }\n": types.ConsoleSetAdminDocument,
    "\n  mutation ConsoleDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on DeleteUserPayload { id } ... on Error { message } } }\n": types.ConsoleDeleteUserDocument,
    "\n  query ConsoleAdminBudgets {\n    budgets { scope subjectId period maxRequests maxTokens maxCost spent { requests tokens cost } }\n    users { id name }\n    configurations { id name }\n  }\n": types.ConsoleAdminBudgetsDocument,
    "\n  mutation ConsoleSetBudget($input: SetBudgetInput!) {\n    setBudget(input: $input) { __typename ... on Budget { subjectId period } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n": types.ConsoleSetBudgetDocument,
    "\n  mutation ConsoleResetToolGroup($name: String!) { resetToolGroup(name: $name) { name enabled } }\n": types.ConsoleResetToolGroupDocument,
    "\n  mutation ConsoleResetTool($name: String!) { resetTool(name: $name) { name enabled } }\n": types.ConsoleResetToolDocument,
    "\n  query ConsoleViewer { viewer { id name isAdmin } }\n": types.ConsoleViewerDocument,
    "\n  query ConsoleConfigurations {\n    configurations { id name privacyLevel allowedToolGroups requireSecondApprover model { name } }\n  }\n": types.ConsoleConfigurationsDocument,
    "\n  mutation ConsoleCreateDemoConfiguration {\n    createDemoConfiguration { __typename ... on Configuration { id name model { name } } ... on Error { message } }\n  }\n": types.ConsoleCreateDemoConfigurationDocument,
    "\n  query ConsoleUsers { users { id name isAdmin active tokenRotatedAt } }\n": types.ConsoleUsersDocument,
    "\n  query ConsoleRuns($filter: RunFilter, $first: Int, $after: String) {\n    runs(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      edges { node { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } } }\n    }\n  }\n": types.ConsoleRunsDocument,
    "\n  subscription ConsoleRunUpdates($filter: RunFilter) {\n    runUpdates(filter: $filter) {\n      snapshot\n      run { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } }\n    }\n  }\n": types.ConsoleRunUpdatesDocument,
    "\n  query ConsoleRun($id: ID!) {\n    run(id: $id) {\n      id kind status createdAt finishedAt iterations prompt privacyLevel terminationReason truncated finalContent errorMessage auditIncomplete\n      configuration { id name } user { id name }\n      usage { promptTokens completionTokens totalTokens estimatedCost }\n    }\n  }\n": types.ConsoleRunDocument,
    "\n  subscription ConsoleRunEvents($runId: ID!) {\n    runEvents(runId: $runId) {\n      __typename\n      ... on RunStartedEvent { run { id status } }\n      ... on RunStepEvent {\n        runId\n        step {\n          sequence kind round content thinking contentRedacted contentLength finishReason durationMs\n          messagesSent messagesSentCount requestedToolCalls requestedToolNames\n          toolName toolCallId toolArguments toolResult toolIsError outcomeUnknown toolResultLength toolArtifactsCount toolArtifactTypes\n          usage { promptTokens completionTokens cost }\n          approval { approved approverName decidedAt }\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } }\n        }\n      }\n      ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n      ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n      ... on RunFinishedEvent {\n        run { id status finishedAt terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } }\n      }\n    }\n  }\n": types.ConsoleRunEventsDocument,
    "\n  mutation ConsoleCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n": types.ConsoleCancelRunDocument,
    "\n  query ConsoleRunnableTools($configurationId: ID!) {\n    runnableTools(configurationId: $configurationId) {\n      name enabled offered offeredCount\n      tools { name description effect offered reason refusedBy }\n    }\n  }\n": types.ConsoleRunnableToolsDocument,
    "\n  mutation ConsoleStartRun($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": types.ConsoleStartRunDocument,
    "\n  subscription ConsoleApprovalRequests {\n    approvalRequests {\n      kind snapshot turnDigest approved decidedBy { name }\n      pendingCalls { id name arguments preview }\n      run { id status prompt configuration { id name requireSecondApprover } user { id name } }\n    }\n  }\n": types.ConsoleApprovalRequestsDocument,
    "\n  mutation ConsoleApproveRun($id: ID!, $turnDigest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $turnDigest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": types.ConsoleApproveRunDocument,
    "\n  query ConsoleToolGroups {\n    toolGroups { name enabled overridden tools { name description effect enabled toolEnabled groupEnabled overridden requiresAdmin } }\n  }\n": types.ConsoleToolGroupsDocument,
    "\n  mutation ConsoleSetToolGroupEnabled($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n": types.ConsoleSetToolGroupEnabledDocument,
    "\n  mutation ConsoleSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { name enabled } }\n": types.ConsoleSetToolEnabledDocument,
    "\n  mutation ConsoleRotateToken($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n": types.ConsoleRotateTokenDocument,
    "\n  mutation ConsoleSetUserActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active } ... on Error { message } }\n  }\n": types.ConsoleSetUserActiveDocument,
    "\n  query ConsoleUsageByDay($from: DateTime!, $to: DateTime!) {\n    usageSummary(from: $from, to: $to, groupBy: [DAY]) { day requests promptTokens completionTokens cost }\n  }\n": types.ConsoleUsageByDayDocument,
    "\n  mutation ChaosStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.ChaosStartRunDocument,
    "\n  query ChaosPending { pendingApprovals { run { id } turnDigest } }\n": types.ChaosPendingDocument,
    "\n  mutation ChaosApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n": types.ChaosApproveDocument,
    "\n  query ChaosRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason resumeCount finishedAt\n      steps(first: 100) { edges { node { sequence kind toolName toolIsError outcomeUnknown toolCallId } } }\n    }\n  }\n": types.ChaosRunDocument,
    "\n  mutation ForgedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.ForgedCreateUserDocument,
    "\n  mutation ForgedStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.ForgedStartRunDocument,
    "\n  mutation ForgedCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": types.ForgedCancelRunDocument,
    "\n  query ForgedRunState($id: ID!) { run(id: $id) { status steps(first: 100) { edges { node { sequence } } } } }\n": types.ForgedRunStateDocument,
    "\n  subscription ForgedRunUpdates { runUpdates { snapshot run { id status } } }\n": types.ForgedRunUpdatesDocument,
    "\n  mutation ForgedDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n": types.ForgedDeactivateDocument,
    "\n  mutation FaultsStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.FaultsStartRunDocument,
    "\n  mutation FaultsCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": types.FaultsCancelRunDocument,
    "\n  query FaultsRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n": types.FaultsRunStateDocument,
    "\n  subscription FaultsRunUpdates { runUpdates { snapshot run { id status terminationReason } } }\n": types.FaultsRunUpdatesDocument,
    "\n  mutation InstancesCreateAlice { createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.InstancesCreateAliceDocument,
    "\n  mutation InstancesStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.InstancesStartRunDocument,
    "\n  mutation InstancesCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n": types.InstancesCancelRunDocument,
    "\n  query InstancesRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n": types.InstancesRunStateDocument,
    "\n  subscription InstancesRunUpdates { runUpdates { snapshot run { id status } } }\n": types.InstancesRunUpdatesDocument,
    "\n  subscription InstancesApprovalRequests { approvalRequests { kind snapshot turnDigest run { id } } }\n": types.InstancesApprovalRequestsDocument,
    "\n  mutation InstancesApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n": types.InstancesApproveDocument,
    "\n  mutation InstancesEnableEditing($alice: ID!) {\n    setToolEnabled(name: \"update_record\", enabled: true) { enabled }\n    grantTable(userId: $alice, table: \"customers\", mode: WRITE) { __typename }\n  }\n": types.InstancesEnableEditingDocument,
    "\n  mutation InstancesDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n": types.InstancesDeactivateDocument,
    "\n  mutation ApprovalApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": types.ApprovalApproveDocument,
    "\n  query ApprovalSettledRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason iterations usage { totalTokens }\n      steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } }\n    }\n  }\n": types.ApprovalSettledRunDocument,
    "\n  mutation ApprovalEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": types.ApprovalEnableToolDocument,
    "\n  mutation ApprovalCreateUsers {\n    a: createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": types.ApprovalCreateUsersDocument,
    "\n  mutation ApprovalGrantBoth($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: READ) { __typename }\n  }\n": types.ApprovalGrantBothDocument,
    "\n  mutation ApprovalGrantCustomers($a: ID!, $mode: GrantMode!) { grantTable(userId: $a, table: \"customers\", mode: $mode) { __typename } }\n": types.ApprovalGrantCustomersDocument,
    "\n  query ApprovalMyPending { pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }\n": types.ApprovalMyPendingDocument,
    "\n  query ApprovalPendingDigests { pendingApprovals { turnDigest } }\n": types.ApprovalPendingDigestsDocument,
    "\n  query ApprovalPendingRuns { pendingApprovals { run { id } turnDigest } }\n": types.ApprovalPendingRunsDocument,
    "\n  mutation ApprovalDisableGroup($name: String!) { setToolGroupEnabled(name: $name, enabled: false) { enabled } }\n": types.ApprovalDisableGroupDocument,
    "\n  mutation ApprovalResetGroup($name: String!) { resetToolGroup(name: $name) { enabled } }\n": types.ApprovalResetGroupDocument,
    "\n  query BudgetsSpent { budgets { scope subjectId period maxRequests spent { requests tokens cost } } }\n": types.BudgetsSpentDocument,
    "\n  mutation SpentSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Error { message } } }\n": types.SpentSetBudgetDocument,
    "\n  mutation SpentCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n": types.SpentCreateUserDocument,
    "\n  mutation SpentSetup($provider: CreateProviderInput!) { createProvider(input: $provider) { __typename ... on Provider { id } ... on Error { message } } }\n": types.SpentSetupDocument,
    "\n  mutation SpentModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n": types.SpentModelDocument,
    "\n  mutation SpentConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n": types.SpentConfigurationDocument,
    "\n  mutation DemoCreate {\n    createDemoConfiguration {\n      __typename\n      ... on Configuration { id name privacyLevel allowedToolGroups model { name providerModelId provider { name kind hasApiKey } } }\n      ... on Error { message }\n    }\n  }\n": types.DemoCreateDocument,
    "\n  mutation DemoCreateUser { createUser(input: { name: \"demo-viewer\" }) { __typename ... on CreateUserPayload { token } } }\n": types.DemoCreateUserDocument,
    "\n  mutation DemoCreateProvider($name: String!) { createProvider(input: { name: $name, kind: OPENAI }) { __typename ... on Provider { id } } }\n": types.DemoCreateProviderDocument,
    "\n  mutation DemoDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename } }\n": types.DemoDeleteProviderDocument,
    "\n  query DemoCatalogue { configurations { id name } providers { name } models { name } }\n": types.DemoCatalogueDocument,
    "\n  mutation DemoStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.DemoStartRunDocument,
    "\n  query DemoRun($id: ID!) { run(id: $id) { status finalContent steps { edges { node { kind toolName toolIsError } } } } }\n": types.DemoRunDocument,
    "\n  mutation DetachedStartRun($input: RunAgentInput!) {\n    startRun(input: $input) {\n      __typename\n      ... on Run { id status }\n      ... on RunLimitError { code limit message }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": types.DetachedStartRunDocument,
    "\n  query DetachedRunState($id: ID!) { run(id: $id) { status terminationReason iterations } }\n": types.DetachedRunStateDocument,
    "\n  mutation DetachedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n": types.DetachedCancelDocument,
    "\n  mutation DetachedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.DetachedCreateUserDocument,
    "\n  mutation RunAgentCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.RunAgentCreateUserDocument,
    "\n  mutation RunAgentGrantTable($id: ID!, $table: String!) { grantTable(userId: $id, table: $table) { __typename } }\n": types.RunAgentGrantTableDocument,
    "\n  query RunAgentOwnersView($id: ID!) { run(id: $id) { finalContent prompt } }\n": types.RunAgentOwnersViewDocument,
    "\n  query RunAgentStoredRun($id: ID!) {\n    run(id: $id) {\n      privacyLevel prompt finalContent\n      steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } }\n    }\n  }\n": types.RunAgentStoredRunDocument,
    "\n  query RunAgentStoredArtifacts($id: ID!) {\n    run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } }\n  }\n": types.RunAgentStoredArtifactsDocument,
    "\n  query RunAgentRunOwners { runs(first: 100) { edges { node { user { id } status } } } }\n": types.RunAgentRunOwnersDocument,
    "\n  query RunAgentFirstRuns { runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }\n": types.RunAgentFirstRunsDocument,
    "\n  query RunAgentNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }\n": types.RunAgentNextRunsDocument,
    "\n  query RunAgentCompletedRuns { runs(first: 100, status: COMPLETED) { edges { node { status } } } }\n": types.RunAgentCompletedRunsDocument,
    "\n  query RunAgentRunId($id: ID!) { run(id: $id) { id } }\n": types.RunAgentRunIdDocument,
    "\n  query RunAgentRunOwnerName($id: ID!) { run(id: $id) { user { name } } }\n": types.RunAgentRunOwnerNameDocument,
    "\n  fragment RunUpdateFields on RunUpdate {\n    snapshot\n    run { id status iterations createdAt finishedAt usage { totalTokens estimatedCost } configuration { id } user { name } }\n  }\n": types.RunUpdateFieldsFragmentDoc,
    "\n  subscription FeedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { ...RunUpdateFields } }\n": types.FeedRunUpdatesDocument,
    "\n  fragment ApprovalFeedEventFields on ApprovalRequestEvent {\n    kind snapshot turnDigest approved decidedBy { name }\n    run { id status user { name } }\n    pendingCalls { name preview }\n  }\n": types.ApprovalFeedEventFieldsFragmentDoc,
    "\n  subscription FeedApprovalRequests { approvalRequests { ...ApprovalFeedEventFields } }\n": types.FeedApprovalRequestsDocument,
    "\n  mutation FeedCreateUsers {\n    a: createUser(input: { name: \"feed-alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"feed-bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": types.FeedCreateUsersDocument,
    "\n  mutation FeedGrantWrite($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: WRITE) { __typename }\n  }\n": types.FeedGrantWriteDocument,
    "\n  mutation FeedEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": types.FeedEnableToolDocument,
    "\n  mutation FeedApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id } ... on Error { message } }\n  }\n": types.FeedApproveDocument,
    "\n  mutation FeedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n": types.FeedCancelDocument,
    "\n  query RunLifecycleStatus($id: ID!) { run(id: $id) { status terminationReason iterations } }\n": types.RunLifecycleStatusDocument,
    "\n  mutation RunLifecycleCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n": types.RunLifecycleCancelDocument,
    "\n  mutation RunLifecycleCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n": types.RunLifecycleCreateUserDocument,
    "\n  query RunLifecycleStoredSteps($id: ID!) { run(id: $id) { steps(first: 50) { edges { node { sequence kind } } } } }\n": types.RunLifecycleStoredStepsDocument,
    "\n  query RunList($filter: RunFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    runs(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id status terminationReason user { name } configuration { name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.RunListDocument,
    "\n  mutation RunListCreateUser { createUser(input: { name: \"lister\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.RunListCreateUserDocument,
    "\n  mutation ToolGroupsStart($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id } ... on ValidationError { message issues { path message } } ... on Error { message } }\n  }\n": types.ToolGroupsStartDocument,
    "\n  query ToolGroupsOffered($id: ID!) { run(id: $id) { status steps(first: 10) { edges { node { kind offeredTools } } } } }\n": types.ToolGroupsOfferedDocument,
    "\n  mutation ToolGroupsCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n": types.ToolGroupsCreateUserDocument,
    "\n  mutation ToolGroupsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n": types.ToolGroupsSwitchDocument,
    "\n  mutation ToolGroupsReset($name: String!) { resetToolGroup(name: $name) { name } }\n": types.ToolGroupsResetDocument,
    "\n  query RunnableTools($id: ID!) {\n    runnableTools(configurationId: $id) {\n      name enabled offered offeredCount\n      tools { name description group effect requiresAdmin offered refusedBy reason }\n    }\n  }\n": types.RunnableToolsDocument,
    "\n  query RunnableToolsDecisions($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName offered reason } } }\n": types.RunnableToolsDecisionsDocument,
    "\n  mutation RunnableToolsStart($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n": types.RunnableToolsStartDocument,
    "\n  query RunnableToolsRequest($id: ID!) { run(id: $id) { status steps(first: 5) { edges { node { kind offeredTools } } } } }\n": types.RunnableToolsRequestDocument,
    "\n  mutation RunnableToolsSetup {\n    skill: createSkill(input: { name: \"ops\", body: \"Operate.\", allowedTools: [\"read_records\", \"describe_tables\", \"get_env\"] }) { __typename ... on Skill { id } }\n    user: createUser(input: { name: \"checkbox-user\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": types.RunnableToolsSetupDocument,
    "\n  query RunnableToolsModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n": types.RunnableToolsModelOfDocument,
    "\n  mutation RunnableToolsSkilled($model: ID!, $skill: ID!) {\n    createConfiguration(input: { name: \"skilled\", modelId: $model, skillIds: [$skill] }) { __typename ... on Configuration { id } }\n  }\n": types.RunnableToolsSkilledDocument,
    "\n  mutation RunnableToolsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name } }\n": types.RunnableToolsSwitchDocument,
    "\n  mutation RunnableToolsReset($name: String!) { resetToolGroup(name: $name) { name } }\n": types.RunnableToolsResetDocument,
    "\n  query TruncationOfConfiguration($id: ID!) { configuration(id: $id) { truncation quarantineToolOutput } }\n": types.TruncationOfConfigurationDocument,
    "\n  mutation TruncationSet($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { truncation quarantineToolOutput } ... on Error { message } }\n  }\n": types.TruncationSetDocument,
    "\n  query TruncationModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n": types.TruncationModelOfDocument,
    "\n  query TruncationStoredSteps($id: ID!) {\n    run(id: $id) { steps(first: 20) { edges { node { kind round toolName toolResult toolResultLength messagesSent } } } }\n  }\n": types.TruncationStoredStepsDocument,
    "\n  query UsageSummary($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) {\n    usageSummary(from: $from, to: $to, groupBy: $groupBy) {\n      user { id name }\n      configuration { id name }\n      model { id name }\n      day\n      requests\n      promptTokens\n      completionTokens\n      cost\n    }\n  }\n": types.UsageSummaryDocument,
    "\n  mutation UsageCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n": types.UsageCreateUserDocument,
    "\n  mutation UsageDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on Error { message } } }\n": types.UsageDeleteUserDocument,
    "\n  mutation UsageDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Error { message } } }\n": types.UsageDeleteConfigurationDocument,
    "\n  mutation UsageDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }\n": types.UsageDeleteModelDocument,
    "\n  query UsageModelOf($id: ID!) { node(id: $id) { ... on Configuration { model { id } } } }\n": types.UsageModelOfDocument,
    "\n    query UsageViewer { viewer { id } }\n  ": types.UsageViewerDocument,
    "\n  mutation LifecycleCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n": types.LifecycleCreateUserDocument,
    "\n  mutation LifecycleRotate($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name tokenRotatedAt } } ... on Error { message } }\n  }\n": types.LifecycleRotateDocument,
    "\n  mutation LifecycleSetActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n": types.LifecycleSetActiveDocument,
    "\n  mutation LifecycleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n": types.LifecycleSetAdminDocument,
    "\n  mutation LifecycleDelete($userId: ID!, $runs: DeleteUserRuns, $reassignTo: ID) {\n    deleteUser(userId: $userId, runs: $runs, reassignTo: $reassignTo) {\n      __typename\n      ... on DeleteUserPayload { id reassignedRuns purgedRuns }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": types.LifecycleDeleteDocument,
    "\n  query LifecycleViewer { viewer { id name active isAdmin } }\n": types.LifecycleViewerDocument,
    "\n  query LifecycleUsers { users { id name active isAdmin tokenRotatedAt } }\n": types.LifecycleUsersDocument,
    "\n  query LifecycleRunOwner($id: ID!) { run(id: $id) { id user { name } } }\n": types.LifecycleRunOwnerDocument,
    "\n  mutation LifecycleSetBudget($subjectId: ID!) { setBudget(input: { subjectId: $subjectId, period: DAILY, maxRequests: 100 }) { __typename } }\n": types.LifecycleSetBudgetDocument,
    "\n  mutation LifecycleGrant($userId: ID!) { grantTable(userId: $userId, table: \"customers\") { __typename } }\n": types.LifecycleGrantDocument,
    "\n  fragment RunEventFields on RunEvent {\n    __typename\n    ... on RunStartedEvent { run { id status } }\n    ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n    ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError outcomeUnknown toolArguments contentRedacted\n        contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount\n        artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }\n    ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n    ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }\n  }\n": types.RunEventFieldsFragmentDoc,
    "\n  subscription RunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...RunEventFields } }\n": types.RunAgentDocument,
    "\n  subscription RunEvents($runId: ID!) { runEvents(runId: $runId) { ...RunEventFields } }\n": types.RunEventsDocument,
    "\n  mutation CreateProvider($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }\n": types.CreateProviderDocument,
    "\n  mutation CreateModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n": types.CreateModelDocument,
    "\n  mutation CreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n": types.CreateConfigurationDocument,
    "\n  mutation ImportCreateMcpServer($input: CreateMcpServerInput!) {\n    createMcpServer(input: $input) {\n      __typename\n      ... on McpServer { id name url group headerNames tools { name available unavailableReason adminOnly } }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n": types.ImportCreateMcpServerDocument,
    "\n  mutation ImportRefreshMcpServer($id: ID!) {\n    refreshMcpServer(id: $id) { __typename ... on McpServer { tools { name available } } ... on Error { message } }\n  }\n": types.ImportRefreshMcpServerDocument,
    "\n  query ImportTools { tools { name group enabled enabledByDefault requiresAdmin parameters } mcpServers { name headerNames url } }\n": types.ImportToolsDocument,
    "\n  mutation ImportUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {\n    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { name group headerNames } ... on Error { message } }\n  }\n": types.ImportUpdateMcpServerDocument,
    "\n  mutation ImportAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String) {\n    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n": types.ImportAcceptMcpToolChangeDocument,
    "\n  mutation ImportRejectMcpToolChange($serverId: ID!, $toolName: String!) {\n    rejectMcpToolChange(serverId: $serverId, toolName: $toolName) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n": types.ImportRejectMcpToolChangeDocument,
    "\n  mutation McpCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.McpCreateUserDocument,
    "\n  mutation McpSetUserActive($id: ID!, $active: Boolean!) { setUserActive(userId: $id, active: $active) { __typename } }\n": types.McpSetUserActiveDocument,
    "\n  mutation McpSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { enabled } }\n": types.McpSetToolEnabledDocument,
    "\n  mutation McpSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n": types.McpSetBudgetDocument,
    "\n  mutation McpUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }\n": types.McpUpdateConfigurationDocument,
    "\n  query McpRuns($filter: RunFilter) {\n    runs(filter: $filter, first: 3) {\n      edges { node { id kind status terminationReason errorMessage privacyLevel prompt iterations\n        user { id name } configuration { id name }\n        steps(first: 20) { edges { node { sequence kind round toolName toolArguments toolResult toolIsError contentRedacted\n          toolResultLength toolArtifactsCount toolArtifactTypes\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } } } } } } }\n    }\n  }\n": types.McpRunsDocument,
    "\n  query PinTools($id: ID!) {\n    node(id: $id) {\n      __typename\n      ... on McpServer {\n        tools {\n          name description inputSchema pinnedDigest\n          pendingChange { old { description inputSchema digest unavailableReason } new { description inputSchema digest unavailableReason } }\n        }\n      }\n    }\n  }\n": types.PinToolsDocument,
    "\n  query PinServers { mcpServers { name tools { name pendingChange { new { description } } } } }\n": types.PinServersDocument,
    "\n  mutation PinEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n": types.PinEnableToolDocument,
    "\n  query PinViewer { viewer { id } }\n": types.PinViewerDocument,
    "\n  mutation ImportSetMcpToolAdminOnly($serverId: ID!, $toolName: String!, $adminOnly: Boolean!) {\n    setMcpToolAdminOnly(serverId: $serverId, toolName: $toolName, adminOnly: $adminOnly) { __typename ... on McpServer { tools { name adminOnly } } }\n  }\n": types.ImportSetMcpToolAdminOnlyDocument,
    "\n  mutation ImportDeleteMcpServer($id: ID!) { deleteMcpServer(id: $id) { __typename ... on Deleted { id } } }\n": types.ImportDeleteMcpServerDocument,
    "\n  mutation ImportEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n": types.ImportEnableToolDocument,
    "\n  query ImportMcpServerTools($id: ID!) {\n    node(id: $id) { __typename ... on McpServer { headerNames tools { name description inputSchema available unavailableReason } } }\n  }\n": types.ImportMcpServerToolsDocument,
    "\n  mutation ImportUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { maxRemoteToolCalls } }\n  }\n": types.ImportUpdateConfigurationDocument,
    "\n  mutation McpCreateAdmin($name: String!) { createUser(input: { name: $name, isAdmin: true }) { __typename ... on CreateUserPayload { token user { id } } } }\n": types.McpCreateAdminDocument,
    "\n  mutation McpSetAdmin($id: ID!, $isAdmin: Boolean!) { setAdmin(userId: $id, isAdmin: $isAdmin) { __typename } }\n": types.McpSetAdminDocument,
    "\n  mutation McpCancelRun($id: ID!) { cancelRun(id: $id) { __typename } }\n": types.McpCancelRunDocument,
    "\n  mutation MetricsSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n": types.MetricsSetBudgetDocument,
    "\n  mutation MetricsApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: false) { __typename } }\n": types.MetricsApproveDocument,
    "\n  query MetricsRunStatus($id: ID!) { run(id: $id) { status } }\n": types.MetricsRunStatusDocument,
    "\n  mutation TracingApprove($id: ID!, $digest: String!) {\n    approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Run { id status } ... on Error { message } }\n  }\n": types.TracingApproveDocument,
    "\n  query TracingRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n": types.TracingRunStatusDocument,
    "\n  mutation SessionsCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n": types.SessionsCreateUserDocument,
    "\n  mutation SessionsRotate($userId: ID!) { rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token } } }\n": types.SessionsRotateDocument,
    "\n  mutation SessionsSetActive($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }\n": types.SessionsSetActiveDocument,
    "\n  mutation SessionsSetAdmin($userId: ID!, $isAdmin: Boolean!) { setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename } }\n": types.SessionsSetAdminDocument,
    "\n  mutation SessionsDelete($userId: ID!) { deleteUser(userId: $userId) { __typename } }\n": types.SessionsDeleteDocument,
    "\n  query SessionsRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n": types.SessionsRunStatusDocument,
    "\n  mutation SessionsCancel($id: ID!) { cancelRun(id: $id) { __typename } }\n": types.SessionsCancelDocument,
    "\n  mutation SessionsGrantWrite($userId: ID!) { grantTable(userId: $userId, table: \"customers\", mode: WRITE) { __typename } }\n": types.SessionsGrantWriteDocument,
    "\n  mutation SessionsEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n": types.SessionsEnableToolDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAdminProviders { providers { id name kind baseUrl hasApiKey settings headerNames models { id } } }\n"): (typeof documents)["\n  query ConsoleAdminProviders { providers { id name kind baseUrl hasApiKey settings headerNames models { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateProvider($input: CreateProviderInput!) {\n    createProvider(input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateProvider($input: CreateProviderInput!) {\n    createProvider(input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleUpdateProvider($id: ID!, $input: UpdateProviderInput!) {\n    updateProvider(id: $id, input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleUpdateProvider($id: ID!, $input: UpdateProviderInput!) {\n    updateProvider(id: $id, input: $input) { __typename ... on Provider { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ConsoleDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAdminModels {\n    models { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { id name } }\n  }\n"): (typeof documents)["\n  query ConsoleAdminModels {\n    models { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { id name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateModel($input: CreateModelInput!) {\n    createModel(input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateModel($input: CreateModelInput!) {\n    createModel(input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleUpdateModel($id: ID!, $input: UpdateModelInput!) {\n    updateModel(id: $id, input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleUpdateModel($id: ID!, $input: UpdateModelInput!) {\n    updateModel(id: $id, input: $input) { __typename ... on Model { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ConsoleDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAdminConfigurations {\n    configurations {\n      id name systemPrompt temperature maxTokens maxIterations allowedToolGroups trustFloor privacyLevel\n      quarantineToolOutput truncation requireSecondApprover maxRemoteToolCalls\n      model { id name } skills { id name }\n    }\n    skills { id name }\n  }\n"): (typeof documents)["\n  query ConsoleAdminConfigurations {\n    configurations {\n      id name systemPrompt temperature maxTokens maxIterations allowedToolGroups trustFloor privacyLevel\n      quarantineToolOutput truncation requireSecondApprover maxRemoteToolCalls\n      model { id name } skills { id name }\n    }\n    skills { id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { id name } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ConsoleDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Deleted { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { __typename ... on CreateUserPayload { token user { id name } } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { __typename ... on CreateUserPayload { token user { id name } } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id isAdmin } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id isAdmin } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on DeleteUserPayload { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ConsoleDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on DeleteUserPayload { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAdminBudgets {\n    budgets { scope subjectId period maxRequests maxTokens maxCost spent { requests tokens cost } }\n    users { id name }\n    configurations { id name }\n  }\n"): (typeof documents)["\n  query ConsoleAdminBudgets {\n    budgets { scope subjectId period maxRequests maxTokens maxCost spent { requests tokens cost } }\n    users { id name }\n    configurations { id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleSetBudget($input: SetBudgetInput!) {\n    setBudget(input: $input) { __typename ... on Budget { subjectId period } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleSetBudget($input: SetBudgetInput!) {\n    setBudget(input: $input) { __typename ... on Budget { subjectId period } ... on ValidationError { issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleResetToolGroup($name: String!) { resetToolGroup(name: $name) { name enabled } }\n"): (typeof documents)["\n  mutation ConsoleResetToolGroup($name: String!) { resetToolGroup(name: $name) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleResetTool($name: String!) { resetTool(name: $name) { name enabled } }\n"): (typeof documents)["\n  mutation ConsoleResetTool($name: String!) { resetTool(name: $name) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleViewer { viewer { id name isAdmin } }\n"): (typeof documents)["\n  query ConsoleViewer { viewer { id name isAdmin } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleConfigurations {\n    configurations { id name privacyLevel allowedToolGroups requireSecondApprover model { name } }\n  }\n"): (typeof documents)["\n  query ConsoleConfigurations {\n    configurations { id name privacyLevel allowedToolGroups requireSecondApprover model { name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateDemoConfiguration {\n    createDemoConfiguration { __typename ... on Configuration { id name model { name } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateDemoConfiguration {\n    createDemoConfiguration { __typename ... on Configuration { id name model { name } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleUsers { users { id name isAdmin active tokenRotatedAt } }\n"): (typeof documents)["\n  query ConsoleUsers { users { id name isAdmin active tokenRotatedAt } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleRuns($filter: RunFilter, $first: Int, $after: String) {\n    runs(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      edges { node { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } } }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleRuns($filter: RunFilter, $first: Int, $after: String) {\n    runs(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      edges { node { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleRunUpdates($filter: RunFilter) {\n    runUpdates(filter: $filter) {\n      snapshot\n      run { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleRunUpdates($filter: RunFilter) {\n    runUpdates(filter: $filter) {\n      snapshot\n      run { id kind status createdAt finishedAt iterations prompt terminationReason configuration { id name } user { id name } usage { totalTokens estimatedCost } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleRun($id: ID!) {\n    run(id: $id) {\n      id kind status createdAt finishedAt iterations prompt privacyLevel terminationReason truncated finalContent errorMessage auditIncomplete\n      configuration { id name } user { id name }\n      usage { promptTokens completionTokens totalTokens estimatedCost }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleRun($id: ID!) {\n    run(id: $id) {\n      id kind status createdAt finishedAt iterations prompt privacyLevel terminationReason truncated finalContent errorMessage auditIncomplete\n      configuration { id name } user { id name }\n      usage { promptTokens completionTokens totalTokens estimatedCost }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleRunEvents($runId: ID!) {\n    runEvents(runId: $runId) {\n      __typename\n      ... on RunStartedEvent { run { id status } }\n      ... on RunStepEvent {\n        runId\n        step {\n          sequence kind round content thinking contentRedacted contentLength finishReason durationMs\n          messagesSent messagesSentCount requestedToolCalls requestedToolNames\n          toolName toolCallId toolArguments toolResult toolIsError outcomeUnknown toolResultLength toolArtifactsCount toolArtifactTypes\n          usage { promptTokens completionTokens cost }\n          approval { approved approverName decidedAt }\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } }\n        }\n      }\n      ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n      ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n      ... on RunFinishedEvent {\n        run { id status finishedAt terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } }\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleRunEvents($runId: ID!) {\n    runEvents(runId: $runId) {\n      __typename\n      ... on RunStartedEvent { run { id status } }\n      ... on RunStepEvent {\n        runId\n        step {\n          sequence kind round content thinking contentRedacted contentLength finishReason durationMs\n          messagesSent messagesSentCount requestedToolCalls requestedToolNames\n          toolName toolCallId toolArguments toolResult toolIsError outcomeUnknown toolResultLength toolArtifactsCount toolArtifactTypes\n          usage { promptTokens completionTokens cost }\n          approval { approved approverName decidedAt }\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } }\n        }\n      }\n      ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n      ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n      ... on RunFinishedEvent {\n        run { id status finishedAt terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ConsoleCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleRunnableTools($configurationId: ID!) {\n    runnableTools(configurationId: $configurationId) {\n      name enabled offered offeredCount\n      tools { name description effect offered reason refusedBy }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleRunnableTools($configurationId: ID!) {\n    runnableTools(configurationId: $configurationId) {\n      name enabled offered offeredCount\n      tools { name description effect offered reason refusedBy }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleStartRun($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleStartRun($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleApprovalRequests {\n    approvalRequests {\n      kind snapshot turnDigest approved decidedBy { name }\n      pendingCalls { id name arguments preview }\n      run { id status prompt configuration { id name requireSecondApprover } user { id name } }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleApprovalRequests {\n    approvalRequests {\n      kind snapshot turnDigest approved decidedBy { name }\n      pendingCalls { id name arguments preview }\n      run { id status prompt configuration { id name requireSecondApprover } user { id name } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleApproveRun($id: ID!, $turnDigest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $turnDigest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleApproveRun($id: ID!, $turnDigest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $turnDigest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleToolGroups {\n    toolGroups { name enabled overridden tools { name description effect enabled toolEnabled groupEnabled overridden requiresAdmin } }\n  }\n"): (typeof documents)["\n  query ConsoleToolGroups {\n    toolGroups { name enabled overridden tools { name description effect enabled toolEnabled groupEnabled overridden requiresAdmin } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleSetToolGroupEnabled($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n"): (typeof documents)["\n  mutation ConsoleSetToolGroupEnabled($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { name enabled } }\n"): (typeof documents)["\n  mutation ConsoleSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleRotateToken($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleRotateToken($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleSetUserActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleSetUserActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleUsageByDay($from: DateTime!, $to: DateTime!) {\n    usageSummary(from: $from, to: $to, groupBy: [DAY]) { day requests promptTokens completionTokens cost }\n  }\n"): (typeof documents)["\n  query ConsoleUsageByDay($from: DateTime!, $to: DateTime!) {\n    usageSummary(from: $from, to: $to, groupBy: [DAY]) { day requests promptTokens completionTokens cost }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ChaosStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ChaosStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChaosPending { pendingApprovals { run { id } turnDigest } }\n"): (typeof documents)["\n  query ChaosPending { pendingApprovals { run { id } turnDigest } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ChaosApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation ChaosApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChaosRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason resumeCount finishedAt\n      steps(first: 100) { edges { node { sequence kind toolName toolIsError outcomeUnknown toolCallId } } }\n    }\n  }\n"): (typeof documents)["\n  query ChaosRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason resumeCount finishedAt\n      steps(first: 100) { edges { node { sequence kind toolName toolIsError outcomeUnknown toolCallId } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ForgedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation ForgedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ForgedStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation ForgedStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ForgedCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"): (typeof documents)["\n  mutation ForgedCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ForgedRunState($id: ID!) { run(id: $id) { status steps(first: 100) { edges { node { sequence } } } } }\n"): (typeof documents)["\n  query ForgedRunState($id: ID!) { run(id: $id) { status steps(first: 100) { edges { node { sequence } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ForgedRunUpdates { runUpdates { snapshot run { id status } } }\n"): (typeof documents)["\n  subscription ForgedRunUpdates { runUpdates { snapshot run { id status } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ForgedDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n"): (typeof documents)["\n  mutation ForgedDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FaultsStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation FaultsStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FaultsCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"): (typeof documents)["\n  mutation FaultsCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FaultsRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n"): (typeof documents)["\n  query FaultsRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FaultsRunUpdates { runUpdates { snapshot run { id status terminationReason } } }\n"): (typeof documents)["\n  subscription FaultsRunUpdates { runUpdates { snapshot run { id status terminationReason } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesCreateAlice { createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation InstancesCreateAlice { createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation InstancesStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"): (typeof documents)["\n  mutation InstancesCancelRun($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InstancesRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n"): (typeof documents)["\n  query InstancesRunState($id: ID!) { run(id: $id) { status terminationReason steps(first: 100) { edges { node { sequence } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InstancesRunUpdates { runUpdates { snapshot run { id status } } }\n"): (typeof documents)["\n  subscription InstancesRunUpdates { runUpdates { snapshot run { id status } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InstancesApprovalRequests { approvalRequests { kind snapshot turnDigest run { id } } }\n"): (typeof documents)["\n  subscription InstancesApprovalRequests { approvalRequests { kind snapshot turnDigest run { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation InstancesApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesEnableEditing($alice: ID!) {\n    setToolEnabled(name: \"update_record\", enabled: true) { enabled }\n    grantTable(userId: $alice, table: \"customers\", mode: WRITE) { __typename }\n  }\n"): (typeof documents)["\n  mutation InstancesEnableEditing($alice: ID!) {\n    setToolEnabled(name: \"update_record\", enabled: true) { enabled }\n    grantTable(userId: $alice, table: \"customers\", mode: WRITE) { __typename }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstancesDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n"): (typeof documents)["\n  mutation InstancesDeactivate($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ApprovalApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApprovalSettledRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason iterations usage { totalTokens }\n      steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } }\n    }\n  }\n"): (typeof documents)["\n  query ApprovalSettledRun($id: ID!) {\n    run(id: $id) {\n      status terminationReason iterations usage { totalTokens }\n      steps(first: 100) { edges { node { sequence kind toolName toolResult approval { approverName approved turnDigest } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"): (typeof documents)["\n  mutation ApprovalEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalCreateUsers {\n    a: createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"): (typeof documents)["\n  mutation ApprovalCreateUsers {\n    a: createUser(input: { name: \"alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalGrantBoth($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: READ) { __typename }\n  }\n"): (typeof documents)["\n  mutation ApprovalGrantBoth($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: READ) { __typename }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalGrantCustomers($a: ID!, $mode: GrantMode!) { grantTable(userId: $a, table: \"customers\", mode: $mode) { __typename } }\n"): (typeof documents)["\n  mutation ApprovalGrantCustomers($a: ID!, $mode: GrantMode!) { grantTable(userId: $a, table: \"customers\", mode: $mode) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApprovalMyPending { pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }\n"): (typeof documents)["\n  query ApprovalMyPending { pendingApprovals { run { user { name } } turnDigest pendingCalls { name preview } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApprovalPendingDigests { pendingApprovals { turnDigest } }\n"): (typeof documents)["\n  query ApprovalPendingDigests { pendingApprovals { turnDigest } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApprovalPendingRuns { pendingApprovals { run { id } turnDigest } }\n"): (typeof documents)["\n  query ApprovalPendingRuns { pendingApprovals { run { id } turnDigest } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalDisableGroup($name: String!) { setToolGroupEnabled(name: $name, enabled: false) { enabled } }\n"): (typeof documents)["\n  mutation ApprovalDisableGroup($name: String!) { setToolGroupEnabled(name: $name, enabled: false) { enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApprovalResetGroup($name: String!) { resetToolGroup(name: $name) { enabled } }\n"): (typeof documents)["\n  mutation ApprovalResetGroup($name: String!) { resetToolGroup(name: $name) { enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BudgetsSpent { budgets { scope subjectId period maxRequests spent { requests tokens cost } } }\n"): (typeof documents)["\n  query BudgetsSpent { budgets { scope subjectId period maxRequests spent { requests tokens cost } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SpentSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation SpentSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SpentCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation SpentCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SpentSetup($provider: CreateProviderInput!) { createProvider(input: $provider) { __typename ... on Provider { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation SpentSetup($provider: CreateProviderInput!) { createProvider(input: $provider) { __typename ... on Provider { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SpentModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation SpentModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SpentConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation SpentConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DemoCreate {\n    createDemoConfiguration {\n      __typename\n      ... on Configuration { id name privacyLevel allowedToolGroups model { name providerModelId provider { name kind hasApiKey } } }\n      ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation DemoCreate {\n    createDemoConfiguration {\n      __typename\n      ... on Configuration { id name privacyLevel allowedToolGroups model { name providerModelId provider { name kind hasApiKey } } }\n      ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DemoCreateUser { createUser(input: { name: \"demo-viewer\" }) { __typename ... on CreateUserPayload { token } } }\n"): (typeof documents)["\n  mutation DemoCreateUser { createUser(input: { name: \"demo-viewer\" }) { __typename ... on CreateUserPayload { token } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DemoCreateProvider($name: String!) { createProvider(input: { name: $name, kind: OPENAI }) { __typename ... on Provider { id } } }\n"): (typeof documents)["\n  mutation DemoCreateProvider($name: String!) { createProvider(input: { name: $name, kind: OPENAI }) { __typename ... on Provider { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DemoDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename } }\n"): (typeof documents)["\n  mutation DemoDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DemoCatalogue { configurations { id name } providers { name } models { name } }\n"): (typeof documents)["\n  query DemoCatalogue { configurations { id name } providers { name } models { name } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DemoStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation DemoStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DemoRun($id: ID!) { run(id: $id) { status finalContent steps { edges { node { kind toolName toolIsError } } } } }\n"): (typeof documents)["\n  query DemoRun($id: ID!) { run(id: $id) { status finalContent steps { edges { node { kind toolName toolIsError } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DetachedStartRun($input: RunAgentInput!) {\n    startRun(input: $input) {\n      __typename\n      ... on Run { id status }\n      ... on RunLimitError { code limit message }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation DetachedStartRun($input: RunAgentInput!) {\n    startRun(input: $input) {\n      __typename\n      ... on Run { id status }\n      ... on RunLimitError { code limit message }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DetachedRunState($id: ID!) { run(id: $id) { status terminationReason iterations } }\n"): (typeof documents)["\n  query DetachedRunState($id: ID!) { run(id: $id) { status terminationReason iterations } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DetachedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n"): (typeof documents)["\n  mutation DetachedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DetachedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation DetachedCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunAgentCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation RunAgentCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunAgentGrantTable($id: ID!, $table: String!) { grantTable(userId: $id, table: $table) { __typename } }\n"): (typeof documents)["\n  mutation RunAgentGrantTable($id: ID!, $table: String!) { grantTable(userId: $id, table: $table) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentOwnersView($id: ID!) { run(id: $id) { finalContent prompt } }\n"): (typeof documents)["\n  query RunAgentOwnersView($id: ID!) { run(id: $id) { finalContent prompt } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentStoredRun($id: ID!) {\n    run(id: $id) {\n      privacyLevel prompt finalContent\n      steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } }\n    }\n  }\n"): (typeof documents)["\n  query RunAgentStoredRun($id: ID!) {\n    run(id: $id) {\n      privacyLevel prompt finalContent\n      steps(first: 50) { edges { node { kind content contentRedacted contentLength toolResult artifacts { __typename } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentStoredArtifacts($id: ID!) {\n    run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } }\n  }\n"): (typeof documents)["\n  query RunAgentStoredArtifacts($id: ID!) {\n    run(id: $id) { steps { edges { node { artifacts { __typename ... on UnknownArtifact { type label data } } } } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentRunOwners { runs(first: 100) { edges { node { user { id } status } } } }\n"): (typeof documents)["\n  query RunAgentRunOwners { runs(first: 100) { edges { node { user { id } status } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentFirstRuns { runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }\n"): (typeof documents)["\n  query RunAgentFirstRuns { runs(first: 2) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }\n"): (typeof documents)["\n  query RunAgentNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id createdAt } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentCompletedRuns { runs(first: 100, status: COMPLETED) { edges { node { status } } } }\n"): (typeof documents)["\n  query RunAgentCompletedRuns { runs(first: 100, status: COMPLETED) { edges { node { status } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentRunId($id: ID!) { run(id: $id) { id } }\n"): (typeof documents)["\n  query RunAgentRunId($id: ID!) { run(id: $id) { id } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunAgentRunOwnerName($id: ID!) { run(id: $id) { user { name } } }\n"): (typeof documents)["\n  query RunAgentRunOwnerName($id: ID!) { run(id: $id) { user { name } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment RunUpdateFields on RunUpdate {\n    snapshot\n    run { id status iterations createdAt finishedAt usage { totalTokens estimatedCost } configuration { id } user { name } }\n  }\n"): (typeof documents)["\n  fragment RunUpdateFields on RunUpdate {\n    snapshot\n    run { id status iterations createdAt finishedAt usage { totalTokens estimatedCost } configuration { id } user { name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FeedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { ...RunUpdateFields } }\n"): (typeof documents)["\n  subscription FeedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { ...RunUpdateFields } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalFeedEventFields on ApprovalRequestEvent {\n    kind snapshot turnDigest approved decidedBy { name }\n    run { id status user { name } }\n    pendingCalls { name preview }\n  }\n"): (typeof documents)["\n  fragment ApprovalFeedEventFields on ApprovalRequestEvent {\n    kind snapshot turnDigest approved decidedBy { name }\n    run { id status user { name } }\n    pendingCalls { name preview }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FeedApprovalRequests { approvalRequests { ...ApprovalFeedEventFields } }\n"): (typeof documents)["\n  subscription FeedApprovalRequests { approvalRequests { ...ApprovalFeedEventFields } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FeedCreateUsers {\n    a: createUser(input: { name: \"feed-alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"feed-bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"): (typeof documents)["\n  mutation FeedCreateUsers {\n    a: createUser(input: { name: \"feed-alice\" }) { __typename ... on CreateUserPayload { token user { id } } }\n    b: createUser(input: { name: \"feed-bob\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FeedGrantWrite($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: WRITE) { __typename }\n  }\n"): (typeof documents)["\n  mutation FeedGrantWrite($a: ID!, $b: ID!) {\n    x: grantTable(userId: $a, table: \"customers\", mode: WRITE) { __typename }\n    y: grantTable(userId: $b, table: \"customers\", mode: WRITE) { __typename }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FeedEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"): (typeof documents)["\n  mutation FeedEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FeedApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation FeedApprove($id: ID!, $digest: String!, $approved: Boolean!) {\n    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FeedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n"): (typeof documents)["\n  mutation FeedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunLifecycleStatus($id: ID!) { run(id: $id) { status terminationReason iterations } }\n"): (typeof documents)["\n  query RunLifecycleStatus($id: ID!) { run(id: $id) { status terminationReason iterations } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunLifecycleCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n"): (typeof documents)["\n  mutation RunLifecycleCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunLifecycleCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n"): (typeof documents)["\n  mutation RunLifecycleCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunLifecycleStoredSteps($id: ID!) { run(id: $id) { steps(first: 50) { edges { node { sequence kind } } } } }\n"): (typeof documents)["\n  query RunLifecycleStoredSteps($id: ID!) { run(id: $id) { steps(first: 50) { edges { node { sequence kind } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunList($filter: RunFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    runs(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id status terminationReason user { name } configuration { name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query RunList($filter: RunFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    runs(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id status terminationReason user { name } configuration { name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunListCreateUser { createUser(input: { name: \"lister\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation RunListCreateUser { createUser(input: { name: \"lister\" }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ToolGroupsStart($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id } ... on ValidationError { message issues { path message } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ToolGroupsStart($input: RunAgentInput!) {\n    startRun(input: $input) { __typename ... on Run { id } ... on ValidationError { message issues { path message } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ToolGroupsOffered($id: ID!) { run(id: $id) { status steps(first: 10) { edges { node { kind offeredTools } } } } }\n"): (typeof documents)["\n  query ToolGroupsOffered($id: ID!) { run(id: $id) { status steps(first: 10) { edges { node { kind offeredTools } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ToolGroupsCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n"): (typeof documents)["\n  mutation ToolGroupsCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ToolGroupsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n"): (typeof documents)["\n  mutation ToolGroupsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ToolGroupsReset($name: String!) { resetToolGroup(name: $name) { name } }\n"): (typeof documents)["\n  mutation ToolGroupsReset($name: String!) { resetToolGroup(name: $name) { name } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunnableTools($id: ID!) {\n    runnableTools(configurationId: $id) {\n      name enabled offered offeredCount\n      tools { name description group effect requiresAdmin offered refusedBy reason }\n    }\n  }\n"): (typeof documents)["\n  query RunnableTools($id: ID!) {\n    runnableTools(configurationId: $id) {\n      name enabled offered offeredCount\n      tools { name description group effect requiresAdmin offered refusedBy reason }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunnableToolsDecisions($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName offered reason } } }\n"): (typeof documents)["\n  query RunnableToolsDecisions($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName offered reason } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunnableToolsStart($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation RunnableToolsStart($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunnableToolsRequest($id: ID!) { run(id: $id) { status steps(first: 5) { edges { node { kind offeredTools } } } } }\n"): (typeof documents)["\n  query RunnableToolsRequest($id: ID!) { run(id: $id) { status steps(first: 5) { edges { node { kind offeredTools } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunnableToolsSetup {\n    skill: createSkill(input: { name: \"ops\", body: \"Operate.\", allowedTools: [\"read_records\", \"describe_tables\", \"get_env\"] }) { __typename ... on Skill { id } }\n    user: createUser(input: { name: \"checkbox-user\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"): (typeof documents)["\n  mutation RunnableToolsSetup {\n    skill: createSkill(input: { name: \"ops\", body: \"Operate.\", allowedTools: [\"read_records\", \"describe_tables\", \"get_env\"] }) { __typename ... on Skill { id } }\n    user: createUser(input: { name: \"checkbox-user\" }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunnableToolsModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n"): (typeof documents)["\n  query RunnableToolsModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunnableToolsSkilled($model: ID!, $skill: ID!) {\n    createConfiguration(input: { name: \"skilled\", modelId: $model, skillIds: [$skill] }) { __typename ... on Configuration { id } }\n  }\n"): (typeof documents)["\n  mutation RunnableToolsSkilled($model: ID!, $skill: ID!) {\n    createConfiguration(input: { name: \"skilled\", modelId: $model, skillIds: [$skill] }) { __typename ... on Configuration { id } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunnableToolsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name } }\n"): (typeof documents)["\n  mutation RunnableToolsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunnableToolsReset($name: String!) { resetToolGroup(name: $name) { name } }\n"): (typeof documents)["\n  mutation RunnableToolsReset($name: String!) { resetToolGroup(name: $name) { name } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TruncationOfConfiguration($id: ID!) { configuration(id: $id) { truncation quarantineToolOutput } }\n"): (typeof documents)["\n  query TruncationOfConfiguration($id: ID!) { configuration(id: $id) { truncation quarantineToolOutput } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TruncationSet($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { truncation quarantineToolOutput } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation TruncationSet($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { truncation quarantineToolOutput } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TruncationModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n"): (typeof documents)["\n  query TruncationModelOf($id: ID!) { configuration(id: $id) { model { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TruncationStoredSteps($id: ID!) {\n    run(id: $id) { steps(first: 20) { edges { node { kind round toolName toolResult toolResultLength messagesSent } } } }\n  }\n"): (typeof documents)["\n  query TruncationStoredSteps($id: ID!) {\n    run(id: $id) { steps(first: 20) { edges { node { kind round toolName toolResult toolResultLength messagesSent } } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageSummary($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) {\n    usageSummary(from: $from, to: $to, groupBy: $groupBy) {\n      user { id name }\n      configuration { id name }\n      model { id name }\n      day\n      requests\n      promptTokens\n      completionTokens\n      cost\n    }\n  }\n"): (typeof documents)["\n  query UsageSummary($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) {\n    usageSummary(from: $from, to: $to, groupBy: $groupBy) {\n      user { id name }\n      configuration { id name }\n      model { id name }\n      day\n      requests\n      promptTokens\n      completionTokens\n      cost\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UsageCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation UsageCreateUser($name: String!) {\n    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UsageDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation UsageDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UsageDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation UsageDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UsageDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }\n"): (typeof documents)["\n  mutation UsageDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageModelOf($id: ID!) { node(id: $id) { ... on Configuration { model { id } } } }\n"): (typeof documents)["\n  query UsageModelOf($id: ID!) { node(id: $id) { ... on Configuration { model { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    query UsageViewer { viewer { id } }\n  "): (typeof documents)["\n    query UsageViewer { viewer { id } }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation LifecycleCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleRotate($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name tokenRotatedAt } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation LifecycleRotate($userId: ID!) {\n    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name tokenRotatedAt } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleSetActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation LifecycleSetActive($userId: ID!, $active: Boolean!) {\n    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation LifecycleSetAdmin($userId: ID!, $isAdmin: Boolean!) {\n    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id active isAdmin } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleDelete($userId: ID!, $runs: DeleteUserRuns, $reassignTo: ID) {\n    deleteUser(userId: $userId, runs: $runs, reassignTo: $reassignTo) {\n      __typename\n      ... on DeleteUserPayload { id reassignedRuns purgedRuns }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation LifecycleDelete($userId: ID!, $runs: DeleteUserRuns, $reassignTo: ID) {\n    deleteUser(userId: $userId, runs: $runs, reassignTo: $reassignTo) {\n      __typename\n      ... on DeleteUserPayload { id reassignedRuns purgedRuns }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LifecycleViewer { viewer { id name active isAdmin } }\n"): (typeof documents)["\n  query LifecycleViewer { viewer { id name active isAdmin } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LifecycleUsers { users { id name active isAdmin tokenRotatedAt } }\n"): (typeof documents)["\n  query LifecycleUsers { users { id name active isAdmin tokenRotatedAt } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LifecycleRunOwner($id: ID!) { run(id: $id) { id user { name } } }\n"): (typeof documents)["\n  query LifecycleRunOwner($id: ID!) { run(id: $id) { id user { name } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleSetBudget($subjectId: ID!) { setBudget(input: { subjectId: $subjectId, period: DAILY, maxRequests: 100 }) { __typename } }\n"): (typeof documents)["\n  mutation LifecycleSetBudget($subjectId: ID!) { setBudget(input: { subjectId: $subjectId, period: DAILY, maxRequests: 100 }) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LifecycleGrant($userId: ID!) { grantTable(userId: $userId, table: \"customers\") { __typename } }\n"): (typeof documents)["\n  mutation LifecycleGrant($userId: ID!) { grantTable(userId: $userId, table: \"customers\") { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment RunEventFields on RunEvent {\n    __typename\n    ... on RunStartedEvent { run { id status } }\n    ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n    ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError outcomeUnknown toolArguments contentRedacted\n        contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount\n        artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }\n    ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n    ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }\n  }\n"): (typeof documents)["\n  fragment RunEventFields on RunEvent {\n    __typename\n    ... on RunStartedEvent { run { id status } }\n    ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }\n    ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError outcomeUnknown toolArguments contentRedacted\n        contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount\n        artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }\n    ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }\n    ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription RunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...RunEventFields } }\n"): (typeof documents)["\n  subscription RunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...RunEventFields } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription RunEvents($runId: ID!) { runEvents(runId: $runId) { ...RunEventFields } }\n"): (typeof documents)["\n  subscription RunEvents($runId: ID!) { runEvents(runId: $runId) { ...RunEventFields } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateProvider($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation CreateProvider($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n"): (typeof documents)["\n  mutation CreateModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation CreateConfiguration($input: CreateConfigurationInput!) {\n    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportCreateMcpServer($input: CreateMcpServerInput!) {\n    createMcpServer(input: $input) {\n      __typename\n      ... on McpServer { id name url group headerNames tools { name available unavailableReason adminOnly } }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation ImportCreateMcpServer($input: CreateMcpServerInput!) {\n    createMcpServer(input: $input) {\n      __typename\n      ... on McpServer { id name url group headerNames tools { name available unavailableReason adminOnly } }\n      ... on ValidationError { message issues { path message } }\n      ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportRefreshMcpServer($id: ID!) {\n    refreshMcpServer(id: $id) { __typename ... on McpServer { tools { name available } } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ImportRefreshMcpServer($id: ID!) {\n    refreshMcpServer(id: $id) { __typename ... on McpServer { tools { name available } } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ImportTools { tools { name group enabled enabledByDefault requiresAdmin parameters } mcpServers { name headerNames url } }\n"): (typeof documents)["\n  query ImportTools { tools { name group enabled enabledByDefault requiresAdmin parameters } mcpServers { name headerNames url } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {\n    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { name group headerNames } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation ImportUpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {\n    updateMcpServer(id: $id, input: $input) { __typename ... on McpServer { name group headerNames } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String) {\n    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation ImportAcceptMcpToolChange($serverId: ID!, $toolName: String!, $digest: String) {\n    acceptMcpToolChange(serverId: $serverId, toolName: $toolName, digest: $digest) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportRejectMcpToolChange($serverId: ID!, $toolName: String!) {\n    rejectMcpToolChange(serverId: $serverId, toolName: $toolName) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation ImportRejectMcpToolChange($serverId: ID!, $toolName: String!) {\n    rejectMcpToolChange(serverId: $serverId, toolName: $toolName) {\n      __typename ... on McpServer { tools { name description pendingChange { new { digest } } } } ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation McpCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpSetUserActive($id: ID!, $active: Boolean!) { setUserActive(userId: $id, active: $active) { __typename } }\n"): (typeof documents)["\n  mutation McpSetUserActive($id: ID!, $active: Boolean!) { setUserActive(userId: $id, active: $active) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { enabled } }\n"): (typeof documents)["\n  mutation McpSetToolEnabled($name: String!, $enabled: Boolean!) { setToolEnabled(name: $name, enabled: $enabled) { enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n"): (typeof documents)["\n  mutation McpSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }\n"): (typeof documents)["\n  mutation McpUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpRuns($filter: RunFilter) {\n    runs(filter: $filter, first: 3) {\n      edges { node { id kind status terminationReason errorMessage privacyLevel prompt iterations\n        user { id name } configuration { id name }\n        steps(first: 20) { edges { node { sequence kind round toolName toolArguments toolResult toolIsError contentRedacted\n          toolResultLength toolArtifactsCount toolArtifactTypes\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } } } } } } }\n    }\n  }\n"): (typeof documents)["\n  query McpRuns($filter: RunFilter) {\n    runs(filter: $filter, first: 3) {\n      edges { node { id kind status terminationReason errorMessage privacyLevel prompt iterations\n        user { id name } configuration { id name }\n        steps(first: 20) { edges { node { sequence kind round toolName toolArguments toolResult toolIsError contentRedacted\n          toolResultLength toolArtifactsCount toolArtifactTypes\n          artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } } } } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PinTools($id: ID!) {\n    node(id: $id) {\n      __typename\n      ... on McpServer {\n        tools {\n          name description inputSchema pinnedDigest\n          pendingChange { old { description inputSchema digest unavailableReason } new { description inputSchema digest unavailableReason } }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query PinTools($id: ID!) {\n    node(id: $id) {\n      __typename\n      ... on McpServer {\n        tools {\n          name description inputSchema pinnedDigest\n          pendingChange { old { description inputSchema digest unavailableReason } new { description inputSchema digest unavailableReason } }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PinServers { mcpServers { name tools { name pendingChange { new { description } } } } }\n"): (typeof documents)["\n  query PinServers { mcpServers { name tools { name pendingChange { new { description } } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PinEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n"): (typeof documents)["\n  mutation PinEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PinViewer { viewer { id } }\n"): (typeof documents)["\n  query PinViewer { viewer { id } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportSetMcpToolAdminOnly($serverId: ID!, $toolName: String!, $adminOnly: Boolean!) {\n    setMcpToolAdminOnly(serverId: $serverId, toolName: $toolName, adminOnly: $adminOnly) { __typename ... on McpServer { tools { name adminOnly } } }\n  }\n"): (typeof documents)["\n  mutation ImportSetMcpToolAdminOnly($serverId: ID!, $toolName: String!, $adminOnly: Boolean!) {\n    setMcpToolAdminOnly(serverId: $serverId, toolName: $toolName, adminOnly: $adminOnly) { __typename ... on McpServer { tools { name adminOnly } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportDeleteMcpServer($id: ID!) { deleteMcpServer(id: $id) { __typename ... on Deleted { id } } }\n"): (typeof documents)["\n  mutation ImportDeleteMcpServer($id: ID!) { deleteMcpServer(id: $id) { __typename ... on Deleted { id } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n"): (typeof documents)["\n  mutation ImportEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { name enabled } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ImportMcpServerTools($id: ID!) {\n    node(id: $id) { __typename ... on McpServer { headerNames tools { name description inputSchema available unavailableReason } } }\n  }\n"): (typeof documents)["\n  query ImportMcpServerTools($id: ID!) {\n    node(id: $id) { __typename ... on McpServer { headerNames tools { name description inputSchema available unavailableReason } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { maxRemoteToolCalls } }\n  }\n"): (typeof documents)["\n  mutation ImportUpdateConfiguration($id: ID!, $input: UpdateConfigurationInput!) {\n    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { maxRemoteToolCalls } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpCreateAdmin($name: String!) { createUser(input: { name: $name, isAdmin: true }) { __typename ... on CreateUserPayload { token user { id } } } }\n"): (typeof documents)["\n  mutation McpCreateAdmin($name: String!) { createUser(input: { name: $name, isAdmin: true }) { __typename ... on CreateUserPayload { token user { id } } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpSetAdmin($id: ID!, $isAdmin: Boolean!) { setAdmin(userId: $id, isAdmin: $isAdmin) { __typename } }\n"): (typeof documents)["\n  mutation McpSetAdmin($id: ID!, $isAdmin: Boolean!) { setAdmin(userId: $id, isAdmin: $isAdmin) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation McpCancelRun($id: ID!) { cancelRun(id: $id) { __typename } }\n"): (typeof documents)["\n  mutation McpCancelRun($id: ID!) { cancelRun(id: $id) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MetricsSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n"): (typeof documents)["\n  mutation MetricsSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MetricsApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: false) { __typename } }\n"): (typeof documents)["\n  mutation MetricsApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: false) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MetricsRunStatus($id: ID!) { run(id: $id) { status } }\n"): (typeof documents)["\n  query MetricsRunStatus($id: ID!) { run(id: $id) { status } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TracingApprove($id: ID!, $digest: String!) {\n    approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"): (typeof documents)["\n  mutation TracingApprove($id: ID!, $digest: String!) {\n    approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Run { id status } ... on Error { message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TracingRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n"): (typeof documents)["\n  query TracingRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"): (typeof documents)["\n  mutation SessionsCreateUser($name: String!, $isAdmin: Boolean) {\n    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsRotate($userId: ID!) { rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token } } }\n"): (typeof documents)["\n  mutation SessionsRotate($userId: ID!) { rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsSetActive($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }\n"): (typeof documents)["\n  mutation SessionsSetActive($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsSetAdmin($userId: ID!, $isAdmin: Boolean!) { setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename } }\n"): (typeof documents)["\n  mutation SessionsSetAdmin($userId: ID!, $isAdmin: Boolean!) { setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsDelete($userId: ID!) { deleteUser(userId: $userId) { __typename } }\n"): (typeof documents)["\n  mutation SessionsDelete($userId: ID!) { deleteUser(userId: $userId) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SessionsRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n"): (typeof documents)["\n  query SessionsRunStatus($id: ID!) { run(id: $id) { status terminationReason } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsCancel($id: ID!) { cancelRun(id: $id) { __typename } }\n"): (typeof documents)["\n  mutation SessionsCancel($id: ID!) { cancelRun(id: $id) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsGrantWrite($userId: ID!) { grantTable(userId: $userId, table: \"customers\", mode: WRITE) { __typename } }\n"): (typeof documents)["\n  mutation SessionsGrantWrite($userId: ID!) { grantTable(userId: $userId, table: \"customers\", mode: WRITE) { __typename } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionsEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"): (typeof documents)["\n  mutation SessionsEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
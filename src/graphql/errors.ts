import { GraphQLError } from 'graphql';
import { ConflictError, DomainError, ForbiddenError, McpServerUnreachableError, NotFoundError, RunLimitError, StaleApprovalError, ValidationError } from '../errors.ts';
import { builder } from './builder.ts';
import { EventBusUnavailableError, SubscriberOverflowError } from '../runtime/events.ts';

/** Every typed error implements `Error { message }`, so clients can select `... on Error`. */
export const ErrorInterface = builder.interfaceRef<Error>('Error').implement({
  fields: (t) => ({ message: t.exposeString('message') }),
});

const FieldIssueRef = builder.simpleObject('FieldIssue', {
  fields: (t) => ({
    path: t.stringList({ description: 'Input path of the bad field, e.g. ["input", "baseUrl"].' }),
    message: t.string(),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    issues: t.field({ type: [FieldIssueRef], resolve: (error) => error.issues.map((issue) => ({ ...issue, path: [...issue.path] })) }),
  }),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ id: t.exposeString('resourceId') }),
});

builder.objectType(ConflictError, {
  name: 'ConflictError',
  interfaces: [ErrorInterface],
});

builder.objectType(ForbiddenError, {
  name: 'ForbiddenError',
  interfaces: [ErrorInterface],
});

builder.objectType(McpServerUnreachableError, {
  name: 'McpServerUnreachableError',
  description: 'The remote MCP server was unreachable, too slow, or answered something that is not usable MCP; nothing was changed. The reason is in the server log.',
  interfaces: [ErrorInterface],
});

builder.objectType(StaleApprovalError, {
  name: 'StaleApprovalError',
  description: 'The turn digest names a turn the run no longer waits on: reload pendingApprovals.',
  interfaces: [ErrorInterface],
});

builder.objectType(RunLimitError, {
  name: 'RunLimitError',
  description:
    'The user already has AIRLOCK_MAX_RUNNING_RUNS_PER_USER runs RUNNING (code RUN_LIMIT_REACHED): nothing was stored; wait for one to finish or cancel one, then start again.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    limit: t.exposeInt('limit', { description: 'Running runs one user may have at once.' }),
    code: t.string({ description: 'Always RUN_LIMIT_REACHED, the code the same refusal carries as a GraphQL error elsewhere.', resolve: () => 'RUN_LIMIT_REACHED' }),
  }),
});

const CODES = new Map<Function, string>([
  [ValidationError, 'BAD_USER_INPUT'],
  [NotFoundError, 'NOT_FOUND'],
  [ConflictError, 'CONFLICT'],
  [ForbiddenError, 'FORBIDDEN'],
  [StaleApprovalError, 'CONFLICT'],
  [RunLimitError, 'RUN_LIMIT_REACHED'],
  [McpServerUnreachableError, 'MCP_SERVER_UNREACHABLE'],
  [SubscriberOverflowError, 'SUBSCRIBER_OVERFLOW'],
  [EventBusUnavailableError, 'EVENT_BUS_UNAVAILABLE'],
]);

/**
 * Whether an error is about the client's own request (its document, input or rights, or something
 * it named that does not exist) rather than a fault of the server: the first is logged at debug,
 * the second at error.
 */
export function isClientError(error: unknown): boolean {
  if (error instanceof DomainError) return true;
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null || isClientError(error.originalError);
}

/** The code a client error is answered with: its own, or its domain error's. */
export function codeOf(error: GraphQLError): unknown {
  return error.extensions?.code ?? exposeDomainError(error.originalError)?.extensions.code;
}

/**
 * A domain error that escaped a field without an error union becomes a plain GraphQL error with a
 * code (its message is ours and safe); anything else returns null and is masked by the server.
 */
export function exposeDomainError(error: unknown): GraphQLError | null {
  if (!(error instanceof DomainError)) return null;
  return new GraphQLError(error.message, {
    extensions: { code: CODES.get(error.constructor) ?? 'BAD_REQUEST' },
  });
}

/**
 * Expected failures of the service layer. The GraphQL layer exposes them as typed union members
 * (errors plugin); anything else is unexpected, masked for clients and logged in full.
 */
export class DomainError extends Error {}

export interface FieldIssue {
  readonly path: readonly string[];
  readonly message: string;
}

export class ValidationError extends DomainError {
  override readonly name = 'ValidationError';
  readonly issues: readonly FieldIssue[];
  constructor(message: string, issues: readonly FieldIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}

export class NotFoundError extends DomainError {
  override readonly name = 'NotFoundError';
  readonly resourceId: string;
  constructor(what: string, resourceId: string) {
    super(`${what} not found.`);
    this.resourceId = resourceId;
  }
}

export class ConflictError extends DomainError {
  override readonly name = 'ConflictError';
}

export class ForbiddenError extends DomainError {
  override readonly name = 'ForbiddenError';
}

/** An approval named a turn the run no longer waits on (it changed, or was already decided). */
export class StaleApprovalError extends DomainError {
  override readonly name = 'StaleApprovalError';
}

/**
 * A user already has as many RUNNING runs as `AIRLOCK_MAX_RUNNING_RUNS_PER_USER` allows: the new
 * run was not created (nothing stored). Code `RUN_LIMIT_REACHED`.
 */
export class RunLimitError extends DomainError {
  override readonly name = 'RunLimitError';
  readonly limit: number;
  constructor(limit: number) {
    super(
      `You already have ${limit} running ${limit === 1 ? 'run' : 'runs'}, the most one user may have at once; ` +
        'wait for one to finish or cancel one (cancelRun), then start again.',
    );
    this.limit = limit;
  }
}

/**
 * A remote MCP server could not be imported or refreshed: unreachable, too slow, or its answer was
 * not MCP (or too large). The message is generic; the reason goes to the server log only (the
 * remote's answer may quote anything). Code `MCP_SERVER_UNREACHABLE`.
 */
export class McpServerUnreachableError extends DomainError {
  override readonly name = 'McpServerUnreachableError';
  constructor(serverName: string) {
    super(`Could not list the tools of MCP server "${serverName}": it was unreachable, too slow, or its answer was not usable MCP. Details are in the server log.`);
  }
}

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

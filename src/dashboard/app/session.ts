// GraphQL from the browser: one graphql-ws connection per signed-in session carries every query,
// mutation and subscription, authenticated by `connectionParams` (the token never goes in a URL).
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import { createClient, type FormattedExecutionResult } from 'graphql-ws';

const TOKEN_KEY = 'airlock.token';
/** The server closes a socket whose token it refuses (bad, rotated, user deactivated) with 4403. */
const FORBIDDEN = 4403;

export const REFUSED_MESSAGE =
  'The server refused this token: it is wrong, was rotated, or its user was deactivated. Paste a current token to sign in again.';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}
export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}
export function clearSession(): void {
  sessionStorage.clear();
}

/**
 * A typed document: codegen's `graphql(...)` gives each operation as its text (a String carrying
 * its result and variables types), which is what the socket sends.
 */
export type Document<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & { toString(): string };

function textOf(document: { toString(): string }): string {
  return document.toString();
}

/** An error of the GraphQL layer, with its code (UNAUTHENTICATED, FORBIDDEN…) when the server gave one. */
export class ApiError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** A close event (or anything) carrying graphql-ws's close code. */
function closeCode(event: unknown): number | undefined {
  return event && typeof event === 'object' && 'code' in event && typeof event.code === 'number' ? event.code : undefined;
}

interface GraphQLErrorLike {
  readonly message?: unknown;
  readonly extensions?: { readonly code?: unknown };
}

function asError(errors: unknown): ApiError {
  if (Array.isArray(errors) && errors.length > 0) {
    const first = errors[0] as GraphQLErrorLike;
    const code = first.extensions?.code;
    return new ApiError(String(first.message ?? 'The request failed.'), typeof code === 'string' ? code : undefined);
  }
  if (closeCode(errors) === FORBIDDEN) return new ApiError(REFUSED_MESSAGE, 'UNAUTHENTICATED');
  if (errors instanceof Error) return new ApiError(errors.message);
  return new ApiError('The connection to the server was lost. Reload the page to reconnect.');
}

/** One signed-in connection to the API. */
export interface Session {
  /** A query or mutation: its data, or an ApiError. */
  request<TResult, TVariables>(document: Document<TResult, TVariables>, variables?: TVariables): Promise<TResult>;
  /** A subscription: each result's data to `onData`, errors to `onError`; returns its stop function. */
  subscribe<TResult, TVariables>(
    document: Document<TResult, TVariables>,
    variables: TVariables,
    onData: (data: TResult) => void,
    onError: (error: ApiError) => void,
  ): () => void;
  dispose(): void;
}

/**
 * A session: `request` answers once (query or mutation), `subscribe` streams; `onRefused` is
 * called once when the server refuses the token (close 4403 or UNAUTHENTICATED).
 */
export function createSession(token: string, onRefused: (message: string) => void): Session {
  let refused = false;
  const refuse = () => {
    if (refused) return;
    refused = true;
    onRefused(REFUSED_MESSAGE);
  };
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const client = createClient({
    url: `${scheme}//${location.host}/graphql`,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: 5,
    shouldRetry: (event) => closeCode(event) !== FORBIDDEN,
    on: {
      closed: (event) => {
        if (closeCode(event) === FORBIDDEN) refuse();
      },
    },
  });

  const check = (error: ApiError): ApiError => {
    if (error.code === 'UNAUTHENTICATED') refuse();
    return error;
  };

  return {
    request<TResult, TVariables>(document: Document<TResult, TVariables>, variables?: TVariables) {
      return new Promise<TResult>((resolve, reject) => {
        let result: FormattedExecutionResult<TResult, unknown> | undefined;
        client.subscribe<TResult>(
          { query: textOf(document), variables: (variables ?? {}) as Record<string, unknown> },
          {
            next: (value) => {
              result = value;
            },
            error: (error) => reject(check(asError(error))),
            complete: () => {
              if (result?.errors?.length) reject(check(asError(result.errors)));
              else if (result?.data) resolve(result.data);
              else reject(new ApiError('The server sent no answer. Try again.'));
            },
          },
        );
      });
    },
    subscribe<TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables, onData: (data: TResult) => void, onError: (error: ApiError) => void) {
      return client.subscribe<TResult>(
        { query: textOf(document), variables: variables as Record<string, unknown> },
        {
          next: (value) => {
            if (value.errors?.length) onError(check(asError(value.errors)));
            else if (value.data) onData(value.data);
          },
          error: (error) => onError(check(asError(error))),
          complete: () => {},
        },
      );
    },
    dispose() {
      void client.dispose();
    },
  };
}

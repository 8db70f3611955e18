import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';

interface FetcherParams {
  readonly query: string;
  readonly variables?: Record<string, unknown> | null;
  readonly operationName?: string | null;
}

/**
 * GraphiQL's fetcher (loaded by the GraphiQL page, not by the console): every operation goes over
 * graphql-ws, with the Headers tab's `Authorization` in `connection_init`, as the protocol carries a
 * token (Yoga's own fetcher sends the tab's headers with HTTP requests only, so a subscription over
 * its websocket connected without a token and was refused with 4403). A new token opens a new
 * connection; the old one is closed.
 */
function createFetcher(url: string) {
  let current: { authorization: string; client: Client } | null = null;
  const clientFor = (authorization: string): Client => {
    if (current?.authorization !== authorization) {
      void current?.client.dispose();
      current = { authorization, client: createClient({ url, lazy: true, retryAttempts: 0, connectionParams: { authorization } }) };
    }
    return current.client;
  };
  return (params: FetcherParams, options?: { headers?: Record<string, unknown> }) => {
    const headers = options?.headers ?? {};
    const authorization = String(headers.Authorization ?? headers.authorization ?? '');
    const payload = { query: params.query, variables: params.variables ?? undefined, operationName: params.operationName ?? undefined };
    return readableErrors(clientFor(authorization).iterate(payload));
  };
}

/** A closed socket or a refused operation as a GraphQL result GraphiQL shows, not "[object CloseEvent]". */
async function* readableErrors(results: AsyncIterable<FormattedExecutionResult>): AsyncGenerator<FormattedExecutionResult> {
  try {
    yield* results;
  } catch (error) {
    if (Array.isArray(error)) {
      yield { errors: error };
    } else if (error instanceof Object && 'code' in error && typeof error.code === 'number') {
      const reason = 'reason' in error && typeof error.reason === 'string' ? error.reason : '';
      const advice = error.code === 4403 ? ': put "Bearer <token>" in the Headers tab below' : '';
      yield { errors: [{ message: `The server closed the connection (${error.code}${reason ? ` ${reason}` : ''})${advice}.` }] };
    } else {
      throw error;
    }
  }
}

(globalThis as { AirlockGraphiQL?: unknown }).AirlockGraphiQL = { createFetcher };

import { createClient } from 'graphql-ws';

/**
 * GraphiQL's fetcher (loaded by the GraphiQL page, not by the console): every operation goes over
 * graphql-ws, with the Headers tab's `Authorization` in `connection_init`, as the protocol carries a
 * token (Yoga's own fetcher sends the tab's headers with HTTP requests only, so a subscription over
 * its websocket connected without a token and was refused with 4403). A new token opens a new
 * connection; the old one is closed.
 */
function createFetcher(url) {
  let current = null;
  const clientFor = (authorization) => {
    if (current?.authorization !== authorization) {
      current?.client.dispose();
      current = { authorization, client: createClient({ url, lazy: true, retryAttempts: 0, connectionParams: { authorization } }) };
    }
    return current.client;
  };
  return (params, options) => {
    const headers = options?.headers ?? {};
    const authorization = String(headers.Authorization ?? headers.authorization ?? '');
    const payload = { query: params.query, variables: params.variables ?? undefined, operationName: params.operationName ?? undefined };
    return readableErrors(clientFor(authorization).iterate(payload));
  };
}

/** A closed socket or a refused operation as a GraphQL result GraphiQL shows, not "[object CloseEvent]". */
async function* readableErrors(results) {
  try {
    yield* results;
  } catch (error) {
    if (Array.isArray(error)) {
      yield { errors: error };
    } else if (typeof error?.code === 'number') {
      const advice = error.code === 4403 ? ': put "Bearer <token>" in the Headers tab below' : '';
      yield { errors: [{ message: `The server closed the connection (${error.code}${error.reason ? ` ${error.reason}` : ''})${advice}.` }] };
    } else {
      throw error;
    }
  }
}

globalThis.AirlockGraphiQL = { createFetcher };

// GraphQL from the browser: one graphql-ws connection per signed-in session carries every query,
// mutation and subscription, authenticated by `connectionParams` (the token never goes in a URL).
import { createClient } from 'graphql-ws';
import { print } from 'graphql/language/printer.mjs';

const TOKEN_KEY = 'airlock.token';
/** The server closes a socket whose token it refuses (bad, rotated, user deactivated) with 4403. */
const FORBIDDEN = 4403;

export const REFUSED_MESSAGE =
  'The server refused this token: it is wrong, was rotated, or its user was deactivated. Paste a current token to sign in again.';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}
export function storeToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}
export function clearSession() {
  sessionStorage.clear();
}

const printed = new WeakMap();
function textOf(document) {
  let text = printed.get(document);
  if (text === undefined) printed.set(document, (text = print(document)));
  return text;
}

/** An error of the GraphQL layer, with its code (UNAUTHENTICATED, FORBIDDEN…) when the server gave one. */
export class ApiError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

function asError(errors) {
  if (Array.isArray(errors) && errors.length > 0) {
    const first = errors[0];
    return new ApiError(String(first.message ?? 'The request failed.'), first.extensions?.code);
  }
  if (errors && typeof errors === 'object' && 'code' in errors && errors.code === FORBIDDEN) return new ApiError(REFUSED_MESSAGE, 'UNAUTHENTICATED');
  if (errors instanceof Error) return new ApiError(errors.message);
  return new ApiError('The connection to the server was lost. Reload the page to reconnect.');
}

/**
 * A session: `request` answers once (query or mutation), `subscribe` streams; `onRefused` is
 * called once when the server refuses the token (close 4403 or UNAUTHENTICATED).
 */
export function createSession(token, onRefused) {
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
    shouldRetry: (event) => !(event && typeof event === 'object' && 'code' in event && event.code === FORBIDDEN),
    on: {
      closed: (event) => {
        if (event && typeof event === 'object' && 'code' in event && event.code === FORBIDDEN) refuse();
      },
    },
  });

  const check = (error) => {
    if (error.code === 'UNAUTHENTICATED') refuse();
    return error;
  };

  return {
    request(document, variables = {}) {
      return new Promise((resolve, reject) => {
        let result;
        client.subscribe(
          { query: textOf(document), variables },
          {
            next: (value) => {
              result = value;
            },
            error: (error) => reject(check(asError(error))),
            complete: () => {
              if (result?.errors?.length) reject(check(asError(result.errors)));
              else if (result) resolve(result.data);
              else reject(new ApiError('The server sent no answer. Try again.'));
            },
          },
        );
      });
    },
    subscribe(document, variables, onData, onError) {
      return client.subscribe(
        { query: textOf(document), variables },
        {
          next: (value) => {
            if (value.errors?.length) onError(check(asError(value.errors)));
            else onData(value.data);
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

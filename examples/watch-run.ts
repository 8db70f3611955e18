/**
 * Follow one run live over graphql-ws: the stored steps first, then each new step as it happens,
 * until the run finishes (or waits for an approval).
 *
 *   export TOKEN=alk_…                                  # the token printed at first start
 *   npx tsx examples/watch-run.ts <runId> [url]
 *
 * The server's address is the second argument, else $URL (the README's recipe exports
 * URL=http://localhost:4000/graphql), else ws://localhost:4000/graphql; an http(s) address means
 * the same endpoint over ws(s), where Airlock serves graphql-ws.
 *
 * graphql-ws retries a closed connection by default (5 attempts with a growing, randomised wait,
 * about 40 s in all) and counts 4403 among the closes worth retrying. A refused token never gets
 * better by waiting, so this client treats Airlock's refusals (4401, 4403, 4408, …) as final and
 * says what went wrong at once; a dropped connection is still retried.
 */
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

export const WATCH_RUN = /* GraphQL */ `
  subscription WatchRun($runId: ID!) {
    runEvents(runId: $runId) {
      __typename
      ... on RunStepEvent { step { sequence kind round toolName toolIsError content toolResult contentRedacted } }
      ... on RunSuspendedEvent { turnDigest pendingCalls { name preview } }
      ... on RunFinishedEvent { run { id status terminationReason errorMessage finalContent } }
    }
  }
`;

/** Close codes that no retry can fix, and what they mean to the person running this. */
const FINAL_CLOSE_CODES: Readonly<Record<number, string>> = {
  4400: 'the server rejected a message as malformed',
  4401: 'the connection was not acknowledged before subscribing',
  4403: 'the token is missing or not valid (export TOKEN=alk_… with a token Airlock issued)',
  4408: 'the connection was not initialised in time',
  4429: 'too many connection initialisations',
  1009: 'a message was larger than the server accepts',
};

/** A watch that cannot go on; `message` is meant to be printed as it is. */
export class WatchRunError extends Error {
  override readonly name = 'WatchRunError';
  /** The websocket close code, when the server closed the connection. */
  readonly closeCode: number | null;
  constructor(message: string, closeCode: number | null = null) {
    super(message);
    this.closeCode = closeCode;
  }
}

interface CloseLike {
  readonly code: number;
  readonly reason?: string;
}

function isCloseEvent(value: unknown): value is CloseLike {
  return typeof value === 'object' && value !== null && typeof (value as CloseLike).code === 'number';
}

function isFinalClose(value: unknown): value is CloseLike {
  return isCloseEvent(value) && value.code in FINAL_CLOSE_CODES;
}

/** The socket's own error, as `ws` reports it inside the ErrorEvent graphql-ws rejects with. */
interface ErrorEventLike {
  readonly error?: { readonly code?: unknown; readonly message?: unknown };
  readonly message?: unknown;
}

function isErrorEvent(value: unknown): value is ErrorEventLike {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'error';
}

/** Connection errors that mean no server answers at the address (rather than a refusal by one). */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Turns whatever graphql-ws reports (a close event, GraphQL errors, a socket's error event, an
 * Error) into one sentence; `url` names the address tried when nothing answered there.
 */
export function describeFailure(failure: unknown, url = 'the server'): WatchRunError {
  if (failure instanceof WatchRunError) return failure;
  if (isErrorEvent(failure)) {
    const code = typeof failure.error?.code === 'string' ? failure.error.code : null;
    const detail = String(failure.error?.message ?? failure.message ?? 'the connection failed');
    if (code !== null && NOTHING_THERE.has(code)) {
      return new WatchRunError(
        `Nothing answers at ${url} (${code}): start Airlock with npm start, or set URL (or pass the address after the run id) to where it listens.`,
      );
    }
    return new WatchRunError(`Could not reach Airlock at ${url}: ${detail}.`);
  }
  if (isCloseEvent(failure)) {
    const meaning = FINAL_CLOSE_CODES[failure.code] ?? 'the connection closed';
    const reason = failure.reason ? ` "${failure.reason}"` : '';
    return new WatchRunError(`Airlock closed the connection (${failure.code}${reason}): ${meaning}.`, failure.code);
  }
  if (Array.isArray(failure)) {
    const messages = failure.map((error: { message?: unknown }) => String(error?.message ?? error));
    return new WatchRunError(`The subscription failed: ${messages.join('; ')}`);
  }
  if (failure instanceof Error) return new WatchRunError(`Could not reach Airlock: ${failure.message}`);
  // Never "[object Object]": an unknown object says what it carries (inspect copes with cycles).
  return new WatchRunError(`The subscription failed: ${inspect(failure, { depth: 2, breakLength: Infinity })}`);
}

export interface WatchRunOptions {
  /** graphql-ws endpoint, e.g. `ws://localhost:4000/graphql`. */
  readonly url: string;
  readonly token: string;
  /** The run's global id (`Run:…` base64, as `runAgent` and `runs` return it). */
  readonly runId: string;
  /** Called with every `runEvents` payload (`{ data }` or `{ errors }`). */
  readonly onEvent: (event: unknown) => void;
  /** Reconnection attempts after a retryable drop (default 5, graphql-ws's own default). */
  readonly retryAttempts?: number;
}

/**
 * Streams the run's events to `onEvent` until the subscription completes. Rejects with a
 * WatchRunError at once when Airlock refuses the connection, instead of retrying.
 */
export async function watchRun(options: WatchRunOptions): Promise<void> {
  let finalClose: CloseLike | null = null;
  const client = createClient({
    url: options.url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${options.token}` },
    retryAttempts: options.retryAttempts ?? 5,
    // Retry a dropped connection, never a refusal: waiting does not make a bad token good.
    shouldRetry: (failure) => isCloseEvent(failure) && !isFinalClose(failure),
    on: {
      // Remember a refusal: it explains the failure better than what the iteration rejects with.
      closed: (event) => {
        if (isFinalClose(event)) finalClose = event;
      },
    },
  });
  try {
    for await (const event of client.iterate({ query: WATCH_RUN, variables: { runId: options.runId } })) {
      options.onEvent(event);
    }
  } catch (failure) {
    throw describeFailure(finalClose ?? failure, options.url);
  } finally {
    await client.dispose();
  }
}

/** The graphql-ws address of an http(s) or ws(s) one: Airlock serves both on the same URL. */
export function websocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, 'ws$1://');
}

async function main(): Promise<void> {
  const [runId, argumentUrl] = process.argv.slice(2);
  const url = websocketUrl(argumentUrl || process.env.URL?.trim() || 'ws://localhost:4000/graphql');
  const token = process.env.TOKEN;
  if (!runId || !token) {
    console.error('Usage: export TOKEN=alk_…; npx tsx examples/watch-run.ts <runId> [url]   (url: else $URL, else ws://localhost:4000/graphql)');
    process.exit(2);
  }
  try {
    await watchRun({
      url,
      token,
      runId,
      onEvent: (event) => {
        console.log(JSON.stringify(event));
        // GraphQL errors (an unknown run, say) end the subscription: say so in the exit code.
        if (typeof event === 'object' && event !== null && 'errors' in event) process.exitCode = 1;
      },
    });
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();

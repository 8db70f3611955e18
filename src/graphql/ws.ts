import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { makeServer } from 'graphql-ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Context, InitialContext } from '../context.ts';
import { bearerToken } from '../services/users.ts';
import type { TimerWheel } from '../runtime/timer-wheel.ts';
import type { Actor } from '../tools/tool.ts';
import { codeOf } from './errors.ts';
import type { ClientErrorLog } from './plugins/log-client-errors.ts';
import { attachGraphqlWs, type SharedFrames, type WsExtra } from './ws-transport.ts';
import { FORBIDDEN_CLOSE_CODE, FORBIDDEN_CLOSE_REASON, type UserSessions } from './user-sessions.ts';

/** How long a new socket may take to send `connection_init` (graphql-ws's default). */
const CONNECTION_INIT_WAIT_MS = 3_000;

/** The close reason of a websocket whose connection failed unexpectedly (the detail is logged). */
const INTERNAL_ERROR = 'Internal server error';

/** Where the websocket side writes: the server's logger fits it (the door does not import it). */
export interface GraphqlWsLog extends ClientErrorLog {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface GraphqlWsDeps {
  /** Every operation runs through `yoga.getEnveloped`: the same plugin stack as over HTTP. */
  readonly yoga: Pick<YogaServerInstance<InitialContext, Context>, 'getEnveloped'>;
  /** Every accepted socket is registered under its user, to be closed when the user loses access. */
  readonly sessions: UserSessions;
  /** The user of a bearer token, or null when it is missing or refused. */
  readonly authenticate: (token: string | null) => Promise<Actor | null>;
  readonly logger: GraphqlWsLog;
  /** A bigger message closes the socket with 1009. */
  readonly maxMessageBytes: number;
  readonly maxSubscriptionsPerConnection: number;
  /** Each socket is pinged this often and closed when it left the previous ping unanswered (default 12 s). */
  readonly keepAliveMs?: number;
  /** The instance's timer wheel: each new socket's wait for `connection_init` (3 s) is a deadline on it. */
  readonly timers: TimerWheel;
  /** Every operation's socket and id, registered under its context (results written past graphql-ws's loop). */
  readonly frames: SharedFrames;
}

export interface GraphqlWs {
  /** Takes over an HTTP upgrade request for the GraphQL path (the caller routes by path). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every operation, then closes every socket. */
  dispose(): Promise<void>;
}

/**
 * graphql-ws on a `ws` server without its own port: authentication at connect (a missing or bad
 * token closes the socket with 4403 before any operation runs), a per-connection cap on open
 * operations, and every operation authenticated anew.
 */
export function serveGraphqlWs(deps: GraphqlWsDeps): GraphqlWs {
  const { yoga, sessions, logger } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxMessageBytes });

  const server = makeServer<Record<string, unknown>, WsExtra>({
    // The transport waits for connection_init on the timer wheel (ws-transport.ts): no timer per socket here.
    connectionInitWaitTimeout: Infinity,
    onConnect: async (ctx) => {
      try {
        const mark = sessions.mark();
        const viewer = await deps.authenticate(bearerToken(ctx.connectionParams?.authorization));
        return viewer !== null && sessions.addSocket(viewer.id, ctx.extra.socket, mark);
      } catch (error) {
        // graphql-ws would send the error's own message as the close reason; it may carry detail.
        logger.error({ err: error }, 'could not authenticate a websocket connection');
        throw new Error(INTERNAL_ERROR);
      }
    },
    onSubscribe: async (ctx, id, payload) => {
      // graphql-ws registers the id in ctx.subscriptions before this hook and removes it in every
      // exit path (finished, client `complete`, refused here, socket closed), so the map is the
      // exact set of open operations. Counting our own way through onComplete would leak: it is
      // not called for operations refused with errors.
      if (Object.keys(ctx.subscriptions).length > deps.maxSubscriptionsPerConnection) {
        return [
          new GraphQLError(`Too many concurrent subscriptions on this connection (limit ${deps.maxSubscriptionsPerConnection}).`, {
            extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
          }),
        ];
      }
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        connectionParams: ctx.connectionParams ?? {},
        params: payload,
      });
      // Parse and validate run the envelop hooks (query limits); their errors describe the
      // client's own document, so they are returned to it rather than closing the socket.
      let document;
      try {
        document = parse(payload.query);
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
      } catch (error) {
        // A parse error that yoga's cache throws again skips the parse hooks: logged here.
        const refusal = asGraphQLError(error, 'Invalid GraphQL document.');
        logger.debug({ code: codeOf(refusal), error: refusal.message }, 'client error');
        return [refusal];
      }
      let contextValue;
      try {
        contextValue = await contextFactory();
      } catch (error) {
        logger.error({ err: error }, 'could not build the context of a websocket operation');
        return [new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } })];
      }
      // Completed by the client meanwhile: graphql-ws drops errors of a gone id, and nothing starts.
      if (!(id in ctx.subscriptions)) return [new GraphQLError('The operation was completed by the client.')];
      // Every operation authenticates anew: a token refused since connect (rotated, its user
      // deactivated or deleted, also by another instance) ends the socket as a bad one at connect would.
      if ((contextValue as Context).viewer === null) {
        ctx.extra.socket.close(FORBIDDEN_CLOSE_CODE, FORBIDDEN_CLOSE_REASON);
        return [new GraphQLError('Authentication required: the token of this connection is no longer valid.', { extensions: { code: 'UNAUTHENTICATED' } })];
      }
      deps.frames.attach(contextValue, ctx.extra.socket, id, () => id in ctx.subscriptions);
      const args: ExecutionArgs = {
        schema,
        document,
        operationName: payload.operationName ?? null,
        variableValues: payload.variables ?? null,
        contextValue,
        rootValue: { execute, subscribe },
      };
      return args;
    },
    execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
    subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
    onError: (_ctx, _id, _payload, errors) => {
      logger.debug({ errors: errors.map((error) => error.message) }, 'graphql-ws operation error');
    },
  });
  const transport = attachGraphqlWs(wss, server, { keepAliveMs: deps.keepAliveMs ?? 12_000, initWaitMs: CONNECTION_INIT_WAIT_MS, schedule: deps.timers.schedule, logger });

  return {
    handleUpgrade: (request, socket, head) =>
      wss.handleUpgrade(request, socket, head, (ws) => {
        wss.emit('connection', ws, request);
        logSocketErrors(ws, logger);
      }),
    dispose: async () => {
      await transport.dispose();
      for (const client of wss.clients) client.terminate();
    },
  };
}

/**
 * A socket's errors are the peer's protocol faults (a message over the size limit, bad UTF-8, a bad
 * frame): `ws` has already closed the socket with the matching code (1009, 1007, 1002). graphql-ws's
 * own handler, registered on 'connection', would print the error's stack with console.error; this
 * replaces it with one structured line (`ws` emits one error per socket; `on`, never a second
 * error without a listener, which would throw).
 */
function logSocketErrors(ws: WebSocket, logger: GraphqlWsLog): void {
  ws.removeAllListeners('error');
  ws.on('error', (error: Error & { code?: string }) => {
    logger.info({ code: error.code ?? 'unknown', reason: error.message.slice(0, 200) }, 'websocket closed on a protocol error of the client');
    if (ws.readyState === ws.OPEN) ws.terminate();
  });
}

/** Errors raised by parse/validate hooks may come from another copy of graphql; re-wrap them. */
function asGraphQLError(error: unknown, fallback: string): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const looksLikeGraphQL = typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'GraphQLError';
  return new GraphQLError(looksLikeGraphQL ? String((error as Error).message) : fallback);
}

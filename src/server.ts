import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ExecutionArgs } from 'graphql';
import { createYoga, isAsyncIterable, maskError as yogaMaskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { createContext, type Context, type InitialContext, type Services } from './context.ts';
import { codeOf, exposeDomainError, isClientError } from './graphql/errors.ts';
import { GRAPHIQL_OPTIONS, renderGraphiQL, useGraphiQLAssets } from './graphql/graphiql.ts';
import { QUERY_COST, useQueryCost } from './graphql/query-cost.ts';
import { useResponseSizeLimit } from './graphql/response-size.ts';
import { useRequireViewer } from './graphql/plugins/require-viewer.ts';
import { useSharedSubscriptionExecution } from './graphql/shared-execution.ts';
import { buildSchema } from './graphql/schema.ts';
import { createUserSessions, FORBIDDEN_CLOSE_CODE, FORBIDDEN_CLOSE_REASON } from './graphql/user-sessions.ts';
import type { Logger } from './logger.ts';
import { authenticate, bearerToken } from './services/users.ts';
import { dashboardRoute } from './dashboard/route.ts';
import { mcpRoute } from './mcp/serve.ts';
import { useOperationTelemetry } from './observability/graphql-telemetry.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Readiness } from './observability/readiness.ts';
import { probeRoutes } from './observability/routes.ts';

export const GRAPHQL_PATH = '/graphql';

/** The close reason of a websocket whose connection failed unexpectedly (the detail is logged). */
const INTERNAL_ERROR = 'Internal server error';

export interface ServerDeps {
  readonly services: Services;
  /** Called once everything is closed (the database is closed by the caller that opened it). */
  readonly onStopped?: () => Promise<void> | void;
  /** GET /metrics (behind its token) and GET /ready; absent = neither route (404). */
  readonly probes?: { readonly metrics: Metrics; readonly readiness: Readiness; readonly metricsToken: string | null };
}

export interface AirlockServer {
  readonly yoga: YogaServerInstance<InitialContext, Context>;
  readonly http: HttpServer;
  /** Starts listening on the configured host and port (0 = any free port); resolves with the URL. */
  start(): Promise<{ url: string; port: number }>;
  /** Stops accepting, closes every socket and subscription, then runs `onStopped`. Idempotent. */
  stop(): Promise<void>;
}

/**
 * One port serves GraphQL over HTTP (POST, GET), server-sent events and graphql-ws websockets at
 * /graphql. The websocket path runs through `yoga.getEnveloped`, so the same plugin stack
 * (authentication, query limits, error masking) applies to both transports.
 */
export function buildServer(deps: ServerDeps): AirlockServer {
  const { services } = deps;
  const { config, logger } = services;
  const production = config.env === 'production';
  const yogaLogger = logger.child({ component: 'yoga' });
  // Every open websocket and SSE stream of a user, ended when the user loses access.
  const sessions = createUserSessions(services.revocations);
  /** Unexpected errors maskError logged with their detail; yoga's own report of them is a duplicate. */
  const loggedUnexpected = new WeakSet<object>();

  const yoga = createYoga<InitialContext, Context>({
    schema: buildSchema(),
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // GraphiQL is a development tool: production serves neither the page nor its files.
    graphiql: production ? false : GRAPHIQL_OPTIONS,
    renderGraphiQL,
    // Batched operations multiply every per-request limit; one operation per request.
    batching: false,
    // Bearer tokens, not cookies: no credentials. Only listed origins get CORS headers, never a reflection.
    cors: (request) => {
      const origin = request.headers.get('origin');
      return origin !== null && config.corsOrigins.includes(origin)
        ? { origin: [origin], credentials: false, methods: ['GET', 'POST'], allowedHeaders: ['authorization', 'content-type', 'accept'], maxAge: 600 }
        : false;
    },
    multipart: false,
    logging: {
      debug: (...args: unknown[]) => yogaLogger.debug({ args }, 'yoga'),
      info: (...args: unknown[]) => yogaLogger.info({ args }, 'yoga'),
      warn: (...args: unknown[]) => yogaLogger.warn({ args }, 'yoga'),
      // Yoga logs every error maskError replaced: a client's error is not the server's fault, and an
      // unexpected one was already logged by maskError with its detail.
      error: (...args: unknown[]) => {
        const [first] = args;
        if (isClientError(first) || (typeof first === 'object' && first !== null && loggedUnexpected.has(first))) yogaLogger.debug({ args }, 'yoga');
        else yogaLogger.error({ args }, 'yoga');
      },
    },
    context: (initial) => createContext(services, initial),
    maskedErrors: {
      maskError(error, message) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        const domain = exposeDomainError(original);
        if (domain) {
          return new GraphQLError(domain.message, {
            ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
            extensions: domain.extensions,
          });
        }
        if (!isClientError(error)) {
          logger.error({ err: original ?? error }, 'unexpected error while resolving a GraphQL operation');
          if (typeof error === 'object' && error !== null) loggedUnexpected.add(error);
        }
        // Never in "dev" mode: the original error (and its stack) may carry credentials.
        return yogaMaskError(error, message, false);
      },
    },
    plugins: [
      // Before every plugin that wraps the subscribe function (tracing), which then wraps this one.
      useSharedSubscriptionExecution(),
      // First with result hooks, so that they see every refusal, including those of the limits below.
      logClientErrors(logger),
      useOperationTelemetry(deps.probes?.metrics),
      EnvelopArmorPlugin({
        maxDepth: { n: 10, exposeLimits: !production, ignoreIntrospection: true },
        maxAliases: { n: 15, exposeLimits: !production },
        maxTokens: { n: 2_000, exposeLimits: !production },
        maxDirectives: { n: 20, exposeLimits: !production },
        // Armor's cost ignores default page sizes and variables: useQueryCost counts instead.
        costLimit: { enabled: false },
        blockFieldSuggestion: { enabled: true },
      }),
      hideEverySuggestion(),
      // After hideEverySuggestion, whose result hooks then also see these refusals.
      useQueryCost({ maxCost: QUERY_COST.maxCost, exposeLimits: !production }),
      useResponseSizeLimit(config.maxResponseBytes),
      useRequireViewer(),
      jsonBodiesOnly(),
      sessions.plugin(),
      ...(production ? [] : [useGraphiQLAssets(GRAPHQL_PATH)]),
      ...(production ? [disableIntrospection()] : []),
    ],
  });

  // The operator console (GET /dashboard and its bundle), built in memory at start.
  const dashboard = dashboardRoute(logger.child({ component: 'dashboard' }));
  // The governed tools of one configuration over the Model Context Protocol (POST/GET/DELETE /mcp).
  const mcp = mcpRoute(services, { name: 'airlock', version: '0.1.0' });
  const probes = deps.probes ? probeRoutes({ ...deps.probes, logger }) : null;
  const http = createServer({ requestTimeout: 60_000 }, (req, res) => {
    if (probes?.handle(req, res)) return;
    if (dashboard.handle(req, res)) return;
    const length = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(length) && length > config.maxRequestBytes) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ errors: [{ message: `Request body too large: the limit is ${config.maxRequestBytes} bytes.` }] }));
      req.resume();
      return;
    }
    if (req.method === 'POST' && req.headers['content-length'] === undefined) {
      // Node enforces Content-Length exactly; a chunked body would escape the size limit.
      res.writeHead(411, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ errors: [{ message: 'Content-Length required: send the request body with a length.' }] }));
      req.resume();
      return;
    }
    if (mcp.handle(req, res)) return;
    void yoga.requestListener(req, res);
  });

  const sockets = new Set<Socket>();
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxWsMessageBytes });
  http.on('upgrade', (request: IncomingMessage, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== GRAPHQL_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      wss.emit('connection', ws, request);
      logSocketErrors(ws, logger);
    });
  });

  const wsServer = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: 3_000,
      // A missing or bad token closes the socket with 4403 before any operation runs; an accepted
      // socket is registered under its user until it closes, to be closed when the user loses access.
      onConnect: async (ctx) => {
        try {
          const mark = sessions.mark();
          const viewer = await authenticate(services.db, bearerToken(ctx.connectionParams?.authorization));
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
        if (Object.keys(ctx.subscriptions).length > config.maxSubscriptionsPerConnection) {
          return [
            new GraphQLError(`Too many concurrent subscriptions on this connection (limit ${config.maxSubscriptionsPerConnection}).`, {
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
    },
    wss,
  );

  let stopping: Promise<void> | null = null;
  return {
    yoga,
    http,
    start: () =>
      new Promise((resolve, reject) => {
        http.once('error', reject);
        http.listen(config.port, config.host, () => {
          http.off('error', reject);
          const { port } = http.address() as AddressInfo;
          const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
          resolve({ url: `http://${host}:${port}${GRAPHQL_PATH}`, port });
        });
      }),
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        // Open MCP sessions settle their runs while the database is still open.
        await mcp.stop();
        sessions.dispose();
        await wsServer.dispose();
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        http.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
        if (http.listening) await closed;
        await yoga.dispose();
        await deps.onStopped?.();
      })()),
  };
}

/**
 * A socket's errors are the peer's protocol faults (a message over the size limit, bad UTF-8, a bad
 * frame): `ws` has already closed the socket with the matching code (1009, 1007, 1002). graphql-ws's
 * own handler, registered on 'connection', would print the error's stack with console.error; this
 * replaces it with one structured line (`ws` emits one error per socket; `on`, never a second
 * error without a listener, which would throw).
 */
function logSocketErrors(ws: WebSocket, logger: Logger): void {
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

/**
 * "Did you mean …?" names parts of the schema. Armor's filter only knows the `Did you mean "x"?` form
 * of validation errors; enum values (`Did you mean the enum value "X"?`) and variable values, which
 * are coerced at execution, need this one. Messages are changed in place, as armor does.
 */
const SUGGESTION = /Did you mean [^?]*\?/g;
function hideEverySuggestion(): Plugin {
  const hide = (error: { message: string }) => {
    if (error.message.includes('Did you mean')) error.message = error.message.replace(SUGGESTION, '[Suggestion hidden]');
  };
  // Variables are coerced before anything streams: their errors come as a single result.
  const inResult = ({ result }: { result: unknown }) => {
    if (!isAsyncIterable(result)) (result as { errors?: readonly { message: string }[] }).errors?.forEach(hide);
  };
  return {
    onValidate: () => ({ result }) => result.forEach(hide),
    onExecute: () => ({ onExecuteDone: inResult }),
    onSubscribe: () => ({ onSubscribeResult: inResult }),
  };
}

/**
 * A client's own mistakes (a bad document, input over a limit, a missing right, an unknown id) are
 * logged at debug: they are not the server's fault, and at error they would bury the faults that
 * are. Unexpected errors are logged at error by maskError, with their detail.
 */
function logClientErrors(logger: Logger): Plugin {
  const log = (errors: readonly unknown[] | undefined) => {
    for (const error of errors ?? []) {
      if (isClientError(error)) logger.debug({ code: codeOf(error as GraphQLError), error: (error as GraphQLError).message }, 'client error');
    }
  };
  const inResult = ({ result }: { result: unknown }) => {
    if (!isAsyncIterable(result)) log((result as { errors?: readonly unknown[] }).errors);
  };
  return {
    onParse: () => ({ result }) => {
      if (result instanceof Error) log([result]);
    },
    onValidate: () => ({ result }) => log(result),
    onExecute: () => ({ onExecuteDone: inResult }),
    onSubscribe: () => ({ onSubscribeResult: inResult }),
  };
}

/** Production refuses introspection: the schema is published in the repository, not probed. */
function disableIntrospection() {
  return {
    onValidate({ addValidationRule }: { addValidationRule: (rule: typeof NoSchemaIntrospectionCustomRule) => void }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** Media types a POST body may have: JSON only (the GraphQL over HTTP spec's own). */
const JSON_BODIES = new Set(['application/json', 'application/graphql-response+json']);

/**
 * A POST must carry JSON. Forms (`application/x-www-form-urlencoded`, `multipart/form-data`,
 * `text/plain`) are what a hostile page can send cross-origin without a preflight, so they would
 * let any site run mutations with a browser's ambient credentials; they get 415 and run nothing.
 */
function jsonBodiesOnly(): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== 'POST') return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (JSON_BODIES.has(mediaType)) return;
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message: 'Unsupported Media Type: send the operation as application/json.' }] }), {
          status: 415,
          headers: { 'content-type': 'application/json' },
        }),
      );
    },
  };
}

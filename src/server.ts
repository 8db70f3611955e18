import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GraphQLError } from 'graphql';
import { createYoga, maskError as yogaMaskError, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from './config.ts';
import type { Context, GraphqlDeps, InitialContext } from './context.ts';
import { exposeDomainError, isClientError } from './graphql/errors.ts';
import { GRAPHIQL_OPTIONS, renderGraphiQL, useGraphiQLAssets } from './graphql/graphiql.ts';
import { useArmor } from './graphql/plugins/armor.ts';
import { useDisableIntrospection } from './graphql/plugins/disable-introspection.ts';
import { useHiddenSuggestions } from './graphql/plugins/hide-suggestions.ts';
import { useJsonBodiesOnly } from './graphql/plugins/json-bodies-only.ts';
import { useClientErrorLog } from './graphql/plugins/log-client-errors.ts';
import { useRequireViewer } from './graphql/plugins/require-viewer.ts';
import { QUERY_COST, useQueryCost } from './graphql/plugins/query-cost.ts';
import { useResponseSizeLimit } from './graphql/plugins/response-size.ts';
import { useSharedSubscriptionExecution } from './graphql/plugins/shared-execution.ts';
import { buildSchema } from './graphql/schema.ts';
import { createUserSessions } from './graphql/user-sessions.ts';
import { serveGraphqlWs } from './graphql/ws.ts';
import { createSharedFrames } from './graphql/ws-transport.ts';
import type { Logger } from './logger.ts';
import type { UserRevocations } from './services/user-revocations.ts';
import { dashboardRoute } from './dashboard/route.ts';
import { mcpRoute, type McpServeDeps } from './mcp/serve.ts';
import { useOperationTelemetry } from './observability/graphql-telemetry.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Readiness } from './observability/readiness.ts';
import { probeRoutes } from './observability/routes.ts';

export const GRAPHQL_PATH = '/graphql';

/** What the server reads of the configuration: its address, the transports' limits, CORS, the environment. */
export type ServerConfig = Pick<
  Config,
  'env' | 'host' | 'port' | 'corsOrigins' | 'maxRequestBytes' | 'maxResponseBytes' | 'maxWsMessageBytes' | 'maxSubscriptionsPerConnection'
>;

/** Exactly what the server uses; the resolvers reach the rest through the context it is handed. */
export interface ServerDeps {
  readonly config: ServerConfig;
  readonly logger: Logger;
  /** The user of a bearer token (null: missing or refused), asked when a websocket connects. */
  readonly authenticate: (token: string | null) => Promise<Context['viewer']>;
  /** Users who lost access: their websockets and SSE streams are closed. */
  readonly revocations: UserRevocations;
  /** The instance's timer wheel: the websockets' waits for `connection_init` are deadlines on it. */
  readonly timers: GraphqlDeps['timers'];
  /** The context of one GraphQL operation, over HTTP or a websocket. */
  readonly context: (initial: InitialContext) => Promise<Context>;
  /** What `/mcp` uses (its own narrow deps). */
  readonly mcp: McpServeDeps;
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
  const { config, logger } = deps;
  const production = config.env === 'production';
  const yogaLogger = logger.child({ component: 'yoga' });
  // Every open websocket and SSE stream of a user, ended when the user loses access.
  const sessions = createUserSessions(deps.revocations);
  // The websocket operations' sockets, for the results written straight to them (ws-transport.ts).
  const frames = createSharedFrames();
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
    context: deps.context,
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
      useSharedSubscriptionExecution(frames.sinkOf),
      // First with result hooks, so that they see every refusal, including those of the limits below.
      useClientErrorLog(logger),
      useOperationTelemetry(deps.probes?.metrics),
      useArmor({ exposeLimits: !production }),
      useHiddenSuggestions(),
      // After useHiddenSuggestions, whose result hooks then also see these refusals.
      useQueryCost({ maxCost: QUERY_COST.maxCost, exposeLimits: !production }),
      useResponseSizeLimit(config.maxResponseBytes),
      useRequireViewer(),
      useJsonBodiesOnly(),
      sessions.plugin(),
      ...(production ? [] : [useGraphiQLAssets(GRAPHQL_PATH)]),
      ...(production ? [useDisableIntrospection()] : []),
    ],
  });

  // The operator console (GET /dashboard and its bundle), built in memory at start.
  const dashboard = dashboardRoute(logger.child({ component: 'dashboard' }));
  // The governed tools of one configuration over the Model Context Protocol (POST/GET/DELETE /mcp).
  const mcp = mcpRoute(deps.mcp, { name: 'airlock', version: '0.1.0' });
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

  // graphql-ws on the same port, through the same plugin stack.
  const ws = serveGraphqlWs({
    yoga,
    sessions,
    authenticate: deps.authenticate,
    logger,
    maxMessageBytes: config.maxWsMessageBytes,
    maxSubscriptionsPerConnection: config.maxSubscriptionsPerConnection,
    timers: deps.timers,
    frames,
  });
  http.on('upgrade', (request: IncomingMessage, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== GRAPHQL_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    ws.handleUpgrade(request, socket, head);
  });

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
        await ws.dispose();
        http.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
        if (http.listening) await closed;
        await yoga.dispose();
        await deps.onStopped?.();
      })()),
  };
}


import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import type { ConfigurationRow, Db, RunRow } from '../db/database.ts';
import { findConfigurationByName, findConfigurationsByIds } from '../db/repositories/configurations.ts';
import { sessionsNoLongerOpen, settleEndedSessions, settleSessionsOf, touchOpenSession } from '../db/repositories/mcp-sessions.ts';
import { decodeIdFor } from '../global-id.ts';
import type { Broadcast } from '../runtime/broadcast.ts';
import type { RunCancellation } from '../services/run-host/cancellation.ts';
import type { UserRevocations } from '../services/user-revocations.ts';
import { authenticate, bearerToken } from '../services/users.ts';
import type { Actor } from '../tools/tool.ts';
import { cancelledRequestIds, INVALID_REQUEST, PARSE_ERROR, refuse, SERVER_ERROR, SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE } from './json-rpc.ts';
import { announceEnded, endMcpSession, openMcpSession, sessionRequest, type McpSessionDeps } from './session.ts';

export const MCP_PATH = '/mcp';
export const CONFIGURATION_HEADER = 'x-airlock-configuration';

/** What `/mcp` needs: what its sessions use, its limits, and the broadcasts that end its sessions' calls. */
export interface McpServeDeps extends McpSessionDeps {
  /** Tool calls over MCP count in the same metrics as the loop's. */
  readonly metrics: NonNullable<McpSessionDeps['metrics']>;
  readonly config: Pick<Config, 'mcpSessionIdleMs' | 'runHeartbeatMs' | 'maxRequestBytes' | 'maxMcpSessionsPerUser' | 'corsOrigins' | 'toolTimeoutMs'>;
  readonly cancellations: Broadcast<RunCancellation>;
  readonly revocations: UserRevocations;
}

export interface McpRoute {
  /** True when the request was for /mcp (and is now answered). */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /**
   * Refuses new requests and abandons this instance's calls in flight (their steps are stored).
   * The sessions stay open: they live in the database, and any other instance (or this one,
   * restarted) serves their next request.
   */
  stop(): Promise<void>;
}

/** A tools/call being served by this instance: what ends it when its session ends, or its client cancels it. */
interface CallInFlight {
  readonly runId: string;
  readonly userId: string;
  /** The JSON-RPC id of the request, as a `notifications/cancelled` names it. */
  readonly requestId: string;
  readonly controller: AbortController;
  /** Settles once the call's step is stored. */
  done: Promise<unknown>;
}

/**
 * How soon a call in flight here learns that its session ended on another instance (or in the
 * database): one query by primary key per period, only while calls are in flight.
 */
const IN_FLIGHT_CHECK_MS = 1_000;

/** A configuration by its global id (as the API gives it), its raw id, or its name (names are unique). */
async function findConfigurationByReference(db: Db, reference: string): Promise<ConfigurationRow | undefined> {
  if (reference.length > 200) return undefined;
  const [byId] = await findConfigurationsByIds(db, [decodeIdFor('Configuration', reference)]);
  return byId ?? (await findConfigurationByName(db, reference));
}

/**
 * The SDK's server half, loaded when the first request comes: about a quarter of a second of every
 * start saved for the servers nobody reaches over MCP.
 */
let serverSdkLoading: Promise<typeof import('@modelcontextprotocol/sdk/server/index.js') & typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js') & typeof import('@modelcontextprotocol/sdk/types.js')> | undefined;
const serverSdk = () =>
  (serverSdkLoading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types })));

/**
 * Streamable HTTP at /mcp. A session is its run row, not a process's memory: the initialize
 * request creates the run (its id is the `Mcp-Session-Id`), and every later request, on any
 * instance, is served by a server and transport made for that request alone (the SDK's stateless
 * mode) once one statement found the session open for this token's user (and recorded the
 * request). So no sticky routing, and a session outlives the instance that opened it. The bearer
 * token is checked on every request. A session ends when its client deletes it (any instance),
 * after AIRLOCK_MCP_SESSION_IDLE_MS without a request (a sweep every instance runs; a request
 * past the deadline is refused even before it), on cancelRun or when its user loses access, and
 * when its user opens one more than AIRLOCK_MAX_MCP_SESSIONS_PER_USER (the least recently used).
 * What lives in this process is only the calls it is serving: they are abandoned (their steps
 * stored) when their session ends, wherever that is decided, and when the server stops.
 */
export function mcpRoute(deps: McpServeDeps, options: { readonly name: string; readonly version: string }): McpRoute {
  const { config, logger: baseLogger, db, bus } = deps;
  const logger = baseLogger.child({ component: 'mcp' });
  const stopped = new AbortController();
  const calls = new Set<CallInFlight>();

  /** Ends this instance's calls of these sessions at once (their signal aborted) and waits for their steps. */
  const abandon = async (match: (call: CallInFlight) => boolean) => {
    const ending = [...calls].filter(match);
    for (const call of ending) call.controller.abort();
    await Promise.allSettled(ending.map((call) => call.done));
  };
  const abandonRuns = (runIds: readonly string[]) => abandon((call) => runIds.includes(call.runId));

  /** Settles the sessions (all, or `ids`) that are idle past the deadline or asked to cancel, and ends their calls here. */
  const settleEnded = async (ids?: readonly string[]) => {
    const settled = await settleEndedSessions(db, config.mcpSessionIdleMs, ids);
    announceEnded(bus, settled);
    if (settled.length > 0) await abandonRuns(settled.map((run) => run.id));
  };

  // The sweep: any instance may run it, each session is settled once (the WHERE clause on its status).
  const sweepMs = Math.min(config.runHeartbeatMs, Math.max(100, Math.floor(config.mcpSessionIdleMs / 4)));
  const sweep = setInterval(() => void settleEnded().catch((error: unknown) => logger.warn({ err: error }, 'MCP session sweep failed')), sweepMs);
  sweep.unref();
  // The calls this instance serves, checked while there are any: a session ended elsewhere (DELETE
  // on another instance, the cap, cancelRun, a sweep) abandons them here within IN_FLIGHT_CHECK_MS.
  const watch = setInterval(() => {
    if (calls.size === 0) return;
    void sessionsNoLongerOpen(db, [...new Set([...calls].map((call) => call.runId))])
      // Abandoned first, so that their steps are stored before the end of a session this instance settles.
      .then((ended) => (ended.length > 0 ? abandonRuns(ended).then(() => settleEnded(ended)) : undefined))
      .catch((error: unknown) => logger.warn({ err: error }, 'MCP calls in flight could not be checked'));
  }, Math.min(config.runHeartbeatMs, IN_FLIGHT_CHECK_MS));
  watch.unref();

  // cancelRun of a session, on any instance: its calls here end, and one instance settles it CANCELLED.
  const stopCancels = deps.cancellations.subscribe(({ runId }) => {
    void abandonRuns([runId])
      .then(() => settleEnded([runId]))
      .catch((error: unknown) => logger.error({ err: error, runId }, 'could not settle a cancelled MCP session'));
  });
  // A user deactivated, deleted or whose token was rotated: their sessions end (a demotion only changes their tools).
  const stopRevocations = deps.revocations.subscribe(({ userId, reason }) => {
    if (reason === 'DEMOTED') return;
    void abandon((call) => call.userId === userId)
      .then(() => settleSessionsOf(db, userId, 'CANCELLED'))
      .then((settled) => announceEnded(bus, settled))
      .catch((error: unknown) => logger.error({ err: error, userId }, 'could not settle the MCP sessions of a user who lost access'));
  });

  const readJson = async (req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false }> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > config.maxRequestBytes) return { ok: false };
      chunks.push(chunk);
    }
    try {
      return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
    } catch {
      return { ok: false };
    }
  };

  /** The SDK's low-level server for one request of the session `run`, its handlers bound to this request's actor. */
  const serverFor = async (run: RunRow, actor: Actor) => {
    const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await serverSdk();
    const session = sessionRequest(deps, run, actor);
    const server = new Server(options, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, () => session.listTools().then((tools) => ({ tools })));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const controller = new AbortController();
      const call: CallInFlight = { runId: run.id, userId: actor.id, requestId: String(extra.requestId), controller, done: Promise.resolve() };
      const result = session.callTool(request.params.name, request.params.arguments, AbortSignal.any([controller.signal, extra.signal]));
      call.done = result.finally(() => calls.delete(call));
      calls.add(call);
      return result;
    });
    return server;
  };

  const openSession = async (req: IncomingMessage, res: ServerResponse, actor: Actor) => {
    if (req.method !== 'POST') return refuse(res, 400, SERVER_ERROR, 'Bad Request: no session; open one with an initialize request (POST).');
    const body = await readJson(req);
    if (!body.ok) return refuse(res, 400, PARSE_ERROR, 'Parse error: the body is not JSON within the size limit.');
    const { StreamableHTTPServerTransport, isInitializeRequest } = await serverSdk();
    if (!isInitializeRequest(body.value)) return refuse(res, 400, SERVER_ERROR, 'Bad Request: no session; open one with an initialize request.');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const header = req.headers[CONFIGURATION_HEADER];
    const reference = url.searchParams.get('configuration') ?? (typeof header === 'string' ? header : null);
    if (!reference) {
      return refuse(res, 400, SERVER_ERROR, `Name the configuration to act under: ${MCP_PATH}?configuration=<name or id>, or the X-Airlock-Configuration header.`);
    }
    const configuration = await findConfigurationByReference(db, reference);
    if (!configuration) return refuse(res, 404, SERVER_ERROR, 'No configuration has this name or id; the configurations query lists those you may use.');
    const { run, closed } = await openMcpSession(deps, actor, configuration, { maxSessions: config.maxMcpSessionsPerUser });
    // The sessions the cap closed end here at once (on other instances at their next check).
    if (closed.length > 0) void abandonRuns(closed.map((settled) => settled.id));
    const server = await serverFor(run, actor);
    // Stateful for this one request only: the SDK answers the handshake and names the session (the run's id).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => run.id, enableJsonResponse: true });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body.value);
    } finally {
      // The handshake failed (a bad Accept header, an error): the run ends here.
      if (transport.sessionId === undefined) await endMcpSession(deps, run.id, 'NOT_OPENED');
      await server.close().catch(() => undefined);
    }
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    // MCP asks servers to check Origin (DNS rebinding): desktop and CLI clients send none; a page may
    // call /mcp only from an origin listed in AIRLOCK_CORS_ORIGINS.
    const origin = req.headers.origin;
    if (origin !== undefined && !config.corsOrigins.includes(origin)) {
      return refuse(res, 403, SERVER_ERROR, 'Forbidden: this Origin may not call /mcp (see AIRLOCK_CORS_ORIGINS).');
    }
    // Every request proves its user anew: a rotated token, or a user deactivated or deleted meanwhile, is refused.
    const actor = await authenticate(db, bearerToken(req.headers.authorization));
    if (!actor) {
      return refuse(res, 401, SERVER_ERROR, 'Authentication required: send Authorization: Bearer <your Airlock token> (an active user).', {
        'www-authenticate': 'Bearer',
      });
    }
    const id = req.headers['mcp-session-id'];
    if (id === undefined) return openSession(req, res, actor);
    // Open, this user's (another user's session is not found either: its id is no use to anyone
    // else), not asked to cancel, not idle past the deadline; the request is recorded.
    const run = typeof id === 'string' ? await touchOpenSession(db, { id, userId: actor.id, idleMs: config.mcpSessionIdleMs }) : undefined;
    if (!run) {
      // Idle past the deadline or asked to cancel and not yet swept: settled now.
      if (typeof id === 'string') await settleEnded([id]);
      return refuse(res, 404, SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE);
    }
    if (req.method === 'DELETE') {
      await abandonRuns([run.id]);
      await endMcpSession(deps, run.id, 'CLOSED', actor.id);
      res.writeHead(200).end();
      return;
    }
    // Nothing is ever pushed to a client unasked, so there is no stream to open: the spec's answer is 405.
    if (req.method === 'GET') return refuse(res, 405, SERVER_ERROR, 'Method not allowed: this server offers no SSE stream on GET.', { allow: 'POST, DELETE' });
    const parsed = await readJson(req);
    if (!parsed.ok) return refuse(res, 400, PARSE_ERROR, 'Parse error: the body is not JSON within the size limit.');
    const { StreamableHTTPServerTransport, isInitializeRequest } = await serverSdk();
    if ((Array.isArray(parsed.value) ? parsed.value : [parsed.value]).some((message) => isInitializeRequest(message))) {
      return refuse(res, 400, INVALID_REQUEST, 'Invalid Request: Server already initialized');
    }
    // A client cancelling its own request: the call ends if this instance serves it (one served by
    // another instance runs to its end or its timeout; the client ignores its answer).
    const cancelled = cancelledRequestIds(parsed.value);
    if (cancelled.length > 0) void abandon((call) => call.runId === run.id && cancelled.includes(call.requestId));
    const server = await serverFor(run, actor);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, parsed.value);
    } finally {
      await server.close().catch(() => undefined);
    }
  };

  return {
    handle(req, res) {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_PATH) return false;
      if (stopped.signal.aborted) {
        refuse(res, 503, SERVER_ERROR, 'The server is shutting down.');
        return true;
      }
      if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
        refuse(res, 405, SERVER_ERROR, 'Method not allowed: /mcp takes POST, GET and DELETE.', { allow: 'POST, GET, DELETE' });
        return true;
      }
      serve(req, res).catch((error: unknown) => {
        logger.error({ err: error }, 'MCP request failed');
        if (!res.headersSent) refuse(res, 500, SERVER_ERROR, 'Internal server error.');
        else res.end();
      });
      return true;
    },
    async stop() {
      stopped.abort();
      clearInterval(sweep);
      clearInterval(watch);
      stopCancels();
      stopRevocations();
      await abandon(() => true);
    },
  };
}

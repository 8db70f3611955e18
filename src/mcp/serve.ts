import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Services } from '../context.ts';
import type { ConfigurationRow, Db } from '../db/database.ts';
import { findConfigurationByName, findConfigurationsByIds } from '../db/repositories/configurations.ts';
import { touchOpenRuns, touchSessionRun } from '../db/repositories/runs.ts';
import { decodeIdFor } from '../graphql/ids.ts';
import { authenticate, bearerToken } from '../services/users.ts';
import type { Actor } from '../tools/tool.ts';
import { openMcpSession, type McpSession, type SessionEnd } from './session.ts';

export const MCP_PATH = '/mcp';
export const CONFIGURATION_HEADER = 'x-airlock-configuration';

/** What `/mcp` needs of the services (the tools, the database, the bus, the run writer, the user events). */
export type McpServeDeps = Pick<Services, 'db' | 'registry' | 'toolData' | 'writer' | 'bus' | 'logger' | 'config' | 'revocations' | 'cancellations'>;

export interface McpRoute {
  /** True when the request was for /mcp (and is now answered). */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Closes every open session, settling its run; then refuses new ones. */
  stop(): Promise<void>;
}

interface OpenSession {
  readonly session: McpSession;
  readonly transport: StreamableHTTPServerTransport;
  idle: NodeJS.Timeout | undefined;
  inFlight: number;
}

/** JSON-RPC error codes the refusals use: the SDK's own for a missing session, else the generic server error. */
const SESSION_NOT_FOUND = -32001;
const SERVER_ERROR = -32000;
const PARSE_ERROR = -32700;
/** Unknown, another user's, or closed (also by the session cap on another instance): the client initializes again. */
const SESSION_NOT_FOUND_MESSAGE = 'Session not found: open a new one with an initialize request.';

/** A configuration by its global id (as the API gives it), its raw id, or its name (names are unique). */
async function findConfigurationByReference(db: Db, reference: string): Promise<ConfigurationRow | undefined> {
  if (reference.length > 200) return undefined;
  const [byId] = await findConfigurationsByIds(db, [decodeIdFor('Configuration', reference)]);
  return byId ?? (await findConfigurationByName(db, reference));
}

function refuse(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * Streamable HTTP at /mcp: one stateful session (`Mcp-Session-Id`, kept in this process) per
 * client, each one run of its user under one configuration. The bearer token is checked on every
 * request; sessions end when the client deletes them, after AIRLOCK_MCP_SESSION_IDLE_MS without a
 * request, when their user loses access or their run is cancelled, when the server stops, and
 * when their user opens one more than AIRLOCK_MAX_MCP_SESSIONS_PER_USER (the least recently used
 * closes, wherever it lives: its run row is settled, which its process reads at the session's next
 * request or heartbeat). Several instances need sticky sessions for /mcp (a session lives in the
 * process that opened it).
 */
/**
 * The SDK's server half, loaded when the first session opens: about a quarter of a second of every
 * start saved for the servers nobody reaches over MCP.
 */
let serverSdkLoading: Promise<typeof import('@modelcontextprotocol/sdk/server/index.js') & typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js') & typeof import('@modelcontextprotocol/sdk/types.js')> | undefined;
const serverSdk = () =>
  (serverSdkLoading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types })));

export function mcpRoute(deps: McpServeDeps, options: { readonly name: string; readonly version: string }): McpRoute {
  const { config, logger: baseLogger, db } = deps;
  const logger = baseLogger.child({ component: 'mcp' });
  const sessions = new Map<string, OpenSession>();
  const stopped = new AbortController();

  const end = async (id: string, reason: SessionEnd) => {
    const open = sessions.get(id);
    if (!open) return;
    sessions.delete(id);
    clearTimeout(open.idle);
    await open.session.close(reason).catch((error: unknown) => logger.error({ err: error, runId: open.session.run.id }, 'could not settle an MCP session run'));
    await open.transport.close().catch(() => undefined);
  };
  const endWhere = (match: (open: OpenSession) => boolean, reason: SessionEnd) =>
    Promise.all([...sessions].filter(([, open]) => match(open)).map(([id]) => end(id, reason)));

  const armIdle = (id: string, open: OpenSession) => {
    clearTimeout(open.idle);
    open.idle = setTimeout(() => {
      if (open.inFlight > 0) return armIdle(id, open);
      void end(id, 'IDLE');
    }, config.mcpSessionIdleMs);
    open.idle.unref();
  };

  // The run of an open session is alive: its heartbeat is touched like the runs the run manager drives
  // (a durable cancel request read here ends the session, and so does its run settled elsewhere).
  const heartbeat = setInterval(() => {
    const byRun = new Map([...sessions.values()].map((open) => [open.session.run.id, open]));
    if (byRun.size === 0) return;
    void touchOpenRuns(db, [...byRun.keys()])
      .then(({ cancelled, ended }) =>
        Promise.all([
          endWhere((open) => cancelled.includes(open.session.run.id), 'CANCELLED'),
          endWhere((open) => ended.includes(open.session.run.id), 'SETTLED'),
        ]),
      )
      .catch((error: unknown) => logger.warn({ err: error }, 'MCP session heartbeat failed'));
  }, config.runHeartbeatMs);
  heartbeat.unref();
  const stopCancels = deps.cancellations.subscribe(({ runId }) => void endWhere((open) => open.session.run.id === runId, 'CANCELLED'));
  const stopRevocations = deps.revocations.subscribe(({ userId, reason }) => {
    if (reason !== 'DEMOTED') void endWhere((open) => open.session.userId === userId, 'CANCELLED');
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

  const openSession = async (req: IncomingMessage, res: ServerResponse, actor: Actor) => {
    if (req.method !== 'POST') return refuse(res, 400, SERVER_ERROR, 'Bad Request: no session; open one with an initialize request (POST).');
    const body = await readJson(req);
    if (!body.ok) return refuse(res, 400, PARSE_ERROR, 'Parse error: the body is not JSON within the size limit.');
    const { Server, StreamableHTTPServerTransport, CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } = await serverSdk();
    if (!isInitializeRequest(body.value)) return refuse(res, 400, SERVER_ERROR, 'Bad Request: no session; open one with an initialize request.');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const header = req.headers[CONFIGURATION_HEADER];
    const reference = url.searchParams.get('configuration') ?? (typeof header === 'string' ? header : null);
    if (!reference) {
      return refuse(res, 400, SERVER_ERROR, `Name the configuration to act under: ${MCP_PATH}?configuration=<name or id>, or the X-Airlock-Configuration header.`);
    }
    const configuration = await findConfigurationByReference(db, reference);
    if (!configuration) return refuse(res, 404, SERVER_ERROR, 'No configuration has this name or id; the configurations query lists those you may use.');
    const { session, closedRunIds } = await openMcpSession(deps, actor, configuration, { maxSessions: config.maxMcpSessionsPerUser, stopSignal: stopped.signal });
    // The sessions the cap closed that live here go at once (the others at their next request or heartbeat).
    if (closedRunIds.length > 0) void endWhere((open) => closedRunIds.includes(open.session.run.id), 'SETTLED');
    const server = new Server(options, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await session.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => session.callTool(request.params.name, request.params.arguments, extra.signal));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // JSON answers, no SSE stream per POST: every result is one short string.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, entry);
        armIdle(id, entry);
      },
      onsessionclosed: (id) => end(id, 'CLOSED'),
    });
    // In flight until the initialize request is answered: the idle timer must not close it meanwhile.
    const entry: OpenSession = { session, transport, idle: undefined, inFlight: 1 };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body.value);
    } finally {
      entry.inFlight -= 1;
      const id = transport.sessionId;
      if (id === undefined || !sessions.has(id)) {
        // The handshake failed (a bad Accept header, an error): the run ends here.
        await session.close('NOT_OPENED');
        await transport.close().catch(() => undefined);
      } else if (stopped.signal.aborted) {
        // Opened while the server was stopping, after `stop` ended the sessions it knew.
        await end(id, 'STOPPED');
      }
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
    const entry = typeof id === 'string' ? sessions.get(id) : undefined;
    // Another user's session is not found either: its id must not be usable by anyone else.
    if (!entry || entry.session.userId !== actor.id) return refuse(res, 404, SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE);
    entry.session.actor = actor;
    // A GET (the client's stream for server messages) stays open for as long as the client likes:
    // only requests (POST) count as activity.
    if (req.method === 'GET') return entry.transport.handleRequest(req, res);
    entry.inFlight += 1;
    try {
      // The use that orders the session cap, and the check that the session was not closed elsewhere.
      if (!(await touchSessionRun(db, entry.session.run.id))) {
        await end(id as string, 'SETTLED');
        return refuse(res, 404, SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE);
      }
      if (req.method === 'DELETE') return await entry.transport.handleRequest(req, res);
      const parsed = await readJson(req);
      if (!parsed.ok) return refuse(res, 400, PARSE_ERROR, 'Parse error: the body is not JSON within the size limit.');
      await entry.transport.handleRequest(req, res, parsed.value);
    } finally {
      entry.inFlight -= 1;
      if (sessions.get(id as string) === entry) armIdle(id as string, entry);
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
      clearInterval(heartbeat);
      stopCancels();
      stopRevocations();
      await endWhere(() => true, 'STOPPED');
    },
  };
}

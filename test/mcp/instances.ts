import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { DbHandle, DbKind } from '../../src/db/create-db.ts';
import { LogCollector, type GqlResponse, type InProcessGql } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { textOf, type TypedDocumentNode } from '../helpers/documents.ts';

/** One Airlock (server, services, its own bus and broadcasts) of several sharing one database. */
export interface McpInstance {
  readonly app: App;
  /** `http://127.0.0.1:<port>` of its listening server. */
  readonly base: string;
  readonly logs: LogCollector;
  /** In-process GraphQL, as the admin unless another token is given. */
  readonly gql: InProcessGql;
  /** Stops it entirely (server, background tasks, its database handle); idempotent. */
  stop(): Promise<void>;
}

export interface McpCluster {
  readonly adminToken: string;
  /** A handle on the shared database, for reading rows as stored. */
  readonly db: DbHandle['db'];
  /** Another instance on the same database (same admin token and master key, as a deployment's). */
  start(): Promise<McpInstance>;
  /** Stops every instance and drops the database. */
  dispose(): Promise<void>;
}

/**
 * Several instances on ONE database, in this process: on PostgreSQL each has its own pool (real
 * concurrency between them); on PGlite, which one process opens once, they share the handle (each
 * instance's stop leaves it open). No Redis: each has its own in-process bus, so what one instance
 * learns from another comes through the database alone, as the MCP sessions must.
 */
export async function mcpCluster(kind: DbKind, env: Record<string, string>): Promise<McpCluster> {
  const database: TestDatabase = await createTestDatabase(kind, { migrated: true });
  const handle = await database.open();
  const adminToken = `mcp-cluster-admin-${randomBytes(12).toString('hex')}`;
  const masterKey = randomBytes(32).toString('base64');
  const instances: McpInstance[] = [];

  const start = async (): Promise<McpInstance> => {
    const config = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      AIRLOCK_ADMIN_TOKEN: adminToken,
      AIRLOCK_MASTER_KEY: masterKey,
      AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '0',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { AIRLOCK_DATA_DIR: 'memory://' }),
      ...env,
    });
    const logs = new LogCollector();
    const shared: DbHandle = { db: handle.db, kind: handle.kind, close: async () => undefined };
    const app = await createApp(config, { logDestination: logs, ...(kind === 'pglite' ? { database: Promise.resolve(shared) } : {}) });
    const { url } = await app.server.start();
    const gql = async (document: TypedDocumentNode<any, any> | string, variables?: Record<string, unknown>, token: string | null | undefined = adminToken) => {
      const response = await app.server.yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query: textOf(document), variables }),
      });
      return (await response.json()) as GqlResponse<any>;
    };
    const instance: McpInstance = { app, base: url.replace(/\/graphql$/, ''), logs, gql: gql as InProcessGql, stop: () => app.stop() };
    instances.push(instance);
    return instance;
  };

  return {
    adminToken,
    db: handle.db,
    start,
    async dispose() {
      await Promise.all(instances.map((instance) => instance.stop()));
      await handle.close();
      await database.drop();
    },
  };
}

/**
 * The SDK's client on a session opened elsewhere: it sends `Mcp-Session-Id` (and the negotiated
 * protocol version) from its first request, without an initialize of its own, as a client does
 * whose requests a load balancer sends to another instance.
 */
export async function attachMcp(base: string, token: string, sessionId: string, protocolVersion: string | undefined) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    sessionId,
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  if (protocolVersion !== undefined) transport.setProtocolVersion(protocolVersion);
  const client = new Client({ name: 'airlock-test-elsewhere', version: '1.0.0' });
  // With a session id set, connect skips the handshake (the SDK's reconnect path).
  await client.connect(transport);
  return { client, transport };
}

/** A raw request on a session, for what the SDK client does not show (status codes, bodies). */
export function sessionPost(base: string, token: string, sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'mcp-session-id': sessionId,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
  });
}

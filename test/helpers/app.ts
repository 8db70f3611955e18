import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { DbKind } from '../../src/db/create-db.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';
import { textOf, type TypedDocumentNode } from './documents.ts';
import { pgliteMigratedTemplate } from './pglite-template.ts';

/** Collects every log line the app writes, for assertions (canaries, redaction). */
export class LogCollector extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApp {
  readonly app: App;
  readonly adminToken: string;
  readonly logs: LogCollector;
  readonly database: TestDatabase;
  /**
   * In-process GraphQL over `yoga.fetch`; returns the parsed JSON body. A typed document (from
   * `graphql(...)`) types its variables and `data`; a plain string stays untyped.
   */
  gql: InProcessGql;
  /** Raw in-process request, for status codes and headers. */
  fetch(init: RequestInit & { path?: string }): Promise<Response>;
  stop(): Promise<void>;
}

/** A GraphQL response body as the server sends it. */
export interface GqlResponse<TData> {
  data?: TData;
  errors?: any[];
}

/** `t.gql`: typed in and out for a document from `graphql(...)`, untyped for a string. */
export interface InProcessGql {
  <TData, TVariables extends Record<string, unknown>>(
    document: TypedDocumentNode<TData, TVariables>,
    ...rest: Record<string, never> extends TVariables ? [variables?: TVariables, token?: string | null] : [variables: TVariables, token?: string | null]
  ): Promise<GqlResponse<TData>>;
  <T = any>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GqlResponse<T>>;
}

export interface TestAppOptions {
  readonly env?: Record<string, string>;
  /** Reuse a database (e.g. to restart on the same data). */
  readonly database?: TestDatabase;
  /** Leave the database in place on stop (the caller drops it). */
  readonly keepDatabase?: boolean;
}

/** Starts a full app (migrations, admin, registry, server) on a private database of the given kind. */
export async function startTestApp(kind: DbKind, options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(kind));
  const adminToken = `test-admin-${randomBytes(12).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    AIRLOCK_ADMIN_TOKEN: adminToken,
    AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'),
    // Suites run many runs at once as one user (the admin) to test other things; the cap on
    // running runs per user (default 8) is tested where it is set (test/graphql/run-limits.test.ts).
    AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '0',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { AIRLOCK_DATA_DIR: database.dataDir ?? 'memory://' }),
    ...options.env,
  });
  const logs = new LogCollector();
  const app = await createApp(config, {
    logDestination: logs,
    // A fresh embedded database (in memory, or a persistent directory's first start) loads the
    // template migrated to the latest schema instead of running initdb and the migrations: seconds
    // per test file. The app still runs its migrations (none pending) and everything else of a start.
    ...(!config.databaseUrl && (config.dataDir === 'memory://' || !existsSync(path.join(config.dataDir, 'pglite'))) ? { pgliteTemplate: pgliteMigratedTemplate() } : {}),
  });
  const fetchRaw = (init: RequestInit & { path?: string }) =>
    Promise.resolve(app.server.yoga.fetch(`http://localhost${init.path ?? '/graphql'}`, init));
  return {
    app,
    adminToken: config.adminToken ?? adminToken,
    logs,
    database,
    fetch: fetchRaw,
    async gql(document: TypedDocumentNode<any, any> | string, variables?: Record<string, unknown>, token: string | null | undefined = config.adminToken) {
      const response = await fetchRaw({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query: textOf(document), variables }),
      });
      return (await response.json()) as GqlResponse<any>;
    },
    async stop() {
      await app.stop();
      if (!options.keepDatabase) await database.drop();
    },
  };
}

import type { Config } from './config.ts';
import type { Db, RunRow } from './db/database.ts';
import type { DbKind as HandleKind } from './db/create-db.ts';
import type { RunWriter } from './db/run-batch-writer.ts';
import type { SecretBox } from './db/secret-box.ts';
import type { Logger, SecretScrubber } from './logger.ts';
import { authenticate, bearerToken } from './services/users.ts';
import type { RunEventBus } from './runtime/events.ts';
import type { RunCancellation } from './services/run-host/cancellation.ts';
import type { RunHost } from './services/run-host/run-host.ts';
import type { Broadcast } from './runtime/broadcast.ts';
import type { Metrics } from './observability/metrics.ts';
import type { UserRevocations } from './services/user-revocations.ts';
import type { McpCatalogChange } from './services/mcp-catalog.ts';
import type { ToolData } from './tools/data.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { Actor } from './tools/tool.ts';

/** Long-lived collaborators, built once at start-up and shared by every request. */
export interface Services {
  readonly config: Config;
  readonly db: Db;
  readonly dbKind: HandleKind;
  readonly registry: ToolRegistry;
  /** Read-only data access handed to tools as `ctx.data`. */
  readonly toolData: ToolData;
  readonly secrets: SecretBox;
  readonly scrubber: SecretScrubber;
  readonly logger: Logger;
  /** Group commit of run steps and usage records (one statement for the rows of concurrent runs). */
  readonly writer: RunWriter;
  /** Per-run and list-level live events (in-process, or over Redis with REDIS_URL). */
  readonly bus: RunEventBus<RunRow>;
  /** Prometheus metrics of this instance (the loop and MCP calls report to it). */
  readonly metrics: Metrics;
  /** Carries cancelRun to the instance that drives the run. */
  readonly cancellations: Broadcast<RunCancellation>;
  /** "The imported tools of this MCP server changed": every instance reloads them from the database. */
  readonly mcpCatalog: Broadcast<McpCatalogChange>;
  /** Starts, cancels and settles agent runs. */
  readonly runs: RunHost;
  /** Users who lost access (token rotated, deactivated, deleted, demoted): their sessions and runs end. */
  readonly revocations: UserRevocations;
}

/** The GraphQL context, identical for HTTP and websocket operations. */
export interface Context {
  readonly viewer: Actor | null;
  readonly services: Services;
}

/** What yoga hands the context factory: a Request over HTTP, connectionParams over graphql-ws. */
export interface InitialContext {
  readonly request?: { readonly headers: { get(name: string): string | null } };
  readonly connectionParams?: Readonly<Record<string, unknown>>;
}

/** Finds the bearer token: `connectionParams.authorization` over websockets, the header over HTTP. */
export function credentialOf(initial: InitialContext): string | null {
  if (initial.connectionParams) {
    const params = initial.connectionParams;
    return bearerToken(params.authorization ?? params.Authorization);
  }
  return bearerToken(initial.request?.headers.get('authorization'));
}

export async function createContext(services: Services, initial: InitialContext): Promise<Context> {
  return { viewer: await authenticate(services.db, credentialOf(initial)), services };
}

import type { Db, RunRow } from './db/database.ts';
import type { SecretBox } from './db/secret-box.ts';
import type { Logger, SecretScrubber } from './logger.ts';
import { authenticate, bearerToken } from './services/users.ts';
import type { RunEventBus } from './runtime/events.ts';
import type { RunHost } from './services/run-host/run-host.ts';
import type { UserRevocations } from './services/user-revocations.ts';
import type { McpCatalogDeps } from './services/mcp-catalog.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { Actor } from './tools/tool.ts';
import type { TimerWheel } from './runtime/timer-wheel.ts';

/**
 * What the GraphQL layer receives of the app: exactly the collaborators its resolvers and the
 * services they call use, built once at start-up (src/app.ts) and shared by every request.
 */
export interface GraphqlDeps {
  readonly db: Db;
  readonly registry: ToolRegistry;
  /** Opens sealed provider keys, MCP server headers and suspended runs. */
  readonly secrets: SecretBox;
  /** Learns each secret a resolver reveals (a provider key, a demo key), so the logger masks it. */
  readonly scrubber: Pick<SecretScrubber, 'add'>;
  /** For what a feed or the pending approvals cannot open (logged, then skipped). */
  readonly logger: Logger;
  /** Per-run and list-level live events: the runs and approvals feeds follow it. */
  readonly bus: RunEventBus<RunRow>;
  /** Announces users who lost access (rotated token, deactivated, deleted, demoted). */
  readonly revocations: UserRevocations;
  /** Starts, follows, cancels and decides agent runs. */
  readonly runHost: RunHost;
  /** The imported MCP servers' catalogue: what their mutations store, reload and announce. */
  readonly mcpCatalog: McpCatalogDeps;
  /** One timer for the deadlines of every live feed (the runs list's coalescing windows). */
  readonly timers: TimerWheel;
}

/** The GraphQL context, identical for HTTP and websocket operations: the viewer beside the layer's deps. */
export interface Context extends GraphqlDeps {
  readonly viewer: Actor | null;
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

export async function createContext(deps: GraphqlDeps, initial: InitialContext): Promise<Context> {
  return { ...deps, viewer: await authenticate(deps.db, credentialOf(initial)) };
}

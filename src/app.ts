import type { DestinationStream } from 'pino';
import { type Config, ConfigError, environmentSnapshot, secretValues } from './config.ts';
import { createContext, type GraphqlDeps } from './context.ts';
import { createDb, type DbHandle, type DbKind } from './db/create-db.ts';
import type { Db, RunRow } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createSecretBox, resolveMasterKey, type SecretBox } from './db/secret-box.ts';
import { createToolData } from './db/repositories/tool-data.ts';
import type { ToolData } from './tools/data.ts';
import { createRunWriter, type RunWriter } from './db/run-batch-writer.ts';
import { type RunEventBus } from './runtime/events.ts';
import { createRunEventBus } from './runtime/local-bus.ts';
import { createTimerWheel } from './runtime/timer-wheel.ts';
import { confirmCancellation, runCancellationSchema, type RunCancellation } from './services/run-host/cancellation.ts';
import { createRunHost, type RunHost } from './services/run-host/run-host.ts';
import type { RedisTransport } from './cluster/redis.ts';
import { createLocalBroadcast, type Broadcast } from './runtime/broadcast.ts';
import { purgeExpiredContent } from './services/retention.ts';
import { confirmRevocation, createUserRevocations, userRevocationSchema, type UserRevocations } from './services/user-revocations.ts';
import { followCatalogChanges, loadCatalog, mcpCatalogChangeSchema, mcpCatalogDeps, type McpCatalogChange, type McpCatalogDeps } from './services/mcp-catalog.ts';
import { countWaitingRuns, pingDatabase } from './db/repositories/monitoring.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { createReadiness, type Readiness } from './observability/readiness.ts';
import { startTracing, type Tracing } from './observability/tracing.ts';
import { createLogger, LogRing, SecretScrubber, type Logger } from './logger.ts';
import { buildServer, type AirlockServer, type ServerDeps } from './server.ts';
import { sealPlaintextHeaders } from './services/providers.ts';
import { type AdminBootstrap, authenticate, bootstrapAdmin } from './services/users.ts';
import { builtinTools } from './tools/builtins.ts';
import { createRegistry, loadToolModules, type ToolRegistry } from './tools/registry.ts';

/** How often stored content past AIRLOCK_RETENTION_DAYS is purged to metadata. */
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The long-lived parts the composition root builds, once, at start-up. Handed whole to nobody
 * below app.ts: each consumer (the GraphQL context, `/mcp`, the run host, the MCP catalogue)
 * receives its own narrow deps, built here from these. Tests and `npm run demo` read them.
 */
export interface AppServices {
  readonly config: Config;
  readonly db: Db;
  readonly dbKind: DbKind;
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
  readonly runHost: RunHost;
  /** Users who lost access (token rotated, deactivated, deleted, demoted): their sessions and runs end. */
  readonly revocations: UserRevocations;
}

export interface App {
  readonly services: AppServices;
  readonly server: AirlockServer;
  /** What the admin bootstrap did; `generated` carries the one-time token to print. */
  readonly admin: AdminBootstrap;
  /** The OpenTelemetry SDK when OTEL_* is set (tests flush it), else null. */
  readonly tracing: Tracing | null;
  /** Stops the server and closes the database. Idempotent. */
  stop(): Promise<void>;
}

export interface AppOptions {
  /** Where log lines go (tests collect them); default stdout. */
  readonly logDestination?: DestinationStream;
  /** Start a new embedded database from this dump (see DbOptions.pgliteTemplate). */
  readonly pgliteTemplate?: Blob;
  /**
   * The database, already being opened by the caller (src/main.ts opens the embedded one while the
   * server's modules load); closed here if the start fails. Default: opened here, after Redis.
   */
  readonly database?: Promise<DbHandle>;
}

export interface AppParts {
  readonly services: AppServices;
  /** What the admin bootstrap did; `generated` carries the one-time token to print. */
  readonly admin: AdminBootstrap;
  /** Prometheus metrics of this instance (served at /metrics by the server). */
  readonly metrics: Metrics;
  /** What /ready checks: the database, and Redis when configured. */
  readonly readiness: Readiness;
  readonly tracing: Tracing | null;
  /** Interrupts open runs, stops the background tasks, flushes the last spans and closes the database. */
  close(): Promise<void>;
}

/**
 * Everything but the server: logger → database → migrations → admin → tool registry. Used by the
 * server and by command-line tools (`npm run demo`). Every collaborator is built here and passed
 * down; nothing is an import-time singleton.
 */
export async function assembleParts(config: Config, options: AppOptions = {}): Promise<AppParts> {
  const scrubber = new SecretScrubber();
  scrubber.add(...secretValues(config));
  const ring = new LogRing();
  const logger = createLogger({ level: config.logLevel, scrubber, ring, destination: options.logDestination });
  const masterKey = resolveMasterKey(config.masterKey, config.dataDir);
  scrubber.add(masterKey.toString('base64'), masterKey.toString('hex'));

  let handle: DbHandle | null = null;
  let transport: RedisTransport | null = null;
  // Only with OTEL_* set: the SDK is not even loaded otherwise.
  const tracing = config.tracing ? await startTracing(config.tracing, logger) : null;
  try {
    // Redis first: an instance that cannot join its deployment stops before touching the database.
    const cluster = await connectCluster(config, logger);
    transport = cluster.transport;
    handle = await (options.database ?? createDb({ ...config, pgliteTemplate: options.pgliteTemplate }));
    const applied = await migrateToLatest(handle.db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied database migrations');
    const admin = await bootstrapAdmin(handle.db, config.adminToken);
    const thirdParty = await loadToolModules(config.toolModules, { logger: logger.child({ component: 'tools' }) });
    const registry = createRegistry([{ source: 'builtin', tools: builtinTools() }, ...thirdParty]);
    const db = handle.db;
    const control = cluster.control(db);
    const redis = transport;
    const bus = cluster.bus;
    const metrics = createMetrics({ approvalsWaiting: () => countWaitingRuns(db), bus, ...(redis ? { redisStats: () => redis.stats, redisRejections: () => redis.rejections.counts() } : {}) });
    const readiness = createReadiness(
      {
        database: () => pingDatabase(db),
        ...(redis
          ? {
              redis: async () => {
                if (!redis.connected()) throw new Error('the Redis subscriber is not connected');
              },
            }
          : {}),
      },
      logger,
    );
    const { revocations, cancellations, mcpCatalog } = control;
    const toolData = createToolData({
      db,
      dbKind: handle.kind,
      environment: environmentSnapshot(),
      recentLogs: (limit) => ring.last(limit),
      startedAt: new Date(),
    });
    const secrets = createSecretBox(masterKey);
    const writer = createRunWriter(db, { onCommit: metrics.writerCommit });
    const runHost = createRunHost(
      { db, registry, toolData, secrets, scrubber, logger, writer, config, bus, cancellations, metrics },
      {
        heartbeatMs: config.runHeartbeatMs,
        stopTimeoutMs: config.stopTimeoutMs,
        maxRunningRunsPerUser: config.maxRunningRunsPerUser,
        leaseMs: config.runLeaseMs,
        resumeRuns: config.resumeRuns,
        claimOrphansAtStart: handle.exclusive === true,
      },
    );
    const services: AppServices = { config, db, dbKind: handle.kind, registry, toolData, secrets, scrubber, logger, writer, bus, metrics, cancellations, mcpCatalog, runHost, revocations };
    const sealedHeaders = await sealPlaintextHeaders({ db, secrets, onSecret: (value) => scrubber.add(value) });
    if (sealedHeaders > 0) logger.info({ providers: sealedHeaders }, 'sealed provider headers stored in plaintext by an earlier version');
    await runHost.settleStale();
    // Imported MCP tools join the registry; a change made by any instance reloads them here.
    const catalog = catalogDepsOf(services);
    const servers = await loadCatalog(catalog);
    if (servers > 0) logger.info({ mcpServers: servers }, 'loaded the imported tools of MCP servers');
    const stopFollowingCatalog = followCatalogChanges(catalog);
    // A user who is deactivated or deleted stops acting: their runs end (a rotated token or a
    // demotion only ends their sessions; a run streaming to a closed session is cancelled as on any disconnect).
    const stopCancellingRuns = revocations.subscribe(({ userId, reason }) => {
      if (reason !== 'DEACTIVATED' && reason !== 'DELETED') return;
      runHost.cancelRunsOf(userId).catch((error: unknown) => logger.error({ err: error, userId }, 'could not cancel the runs of a user who lost access'));
    });
    const dbHandle = handle;
    const purge = () =>
      purgeExpiredContent(dbHandle.db, config.retentionDays)
        .then((count) => count > 0 && logger.info({ runs: count, retentionDays: config.retentionDays }, 'purged expired run content to metadata'))
        .catch((error: unknown) => logger.error({ err: error }, 'retention purge failed'));
    void purge();
    const retention = setInterval(() => void purge(), RETENTION_INTERVAL_MS);
    retention.unref();
    return {
      services,
      admin,
      metrics,
      readiness,
      tracing,
      close: async () => {
        stopCancellingRuns();
        stopFollowingCatalog();
        clearInterval(retention);
        await runHost.stop();
        await tracing?.shutdown();
        await transport?.close();
        await dbHandle.close();
      },
    };
  } catch (error) {
    await tracing?.shutdown();
    await transport?.close();
    await (handle ?? (await options.database?.catch(() => null)))?.close();
    throw error;
  }
}

/**
 * The bus and broadcasts of this instance: in-process without REDIS_URL; over Redis with it (the
 * start fails, naming REDIS_URL, when Redis cannot be reached). Over Redis every message is signed
 * with a key derived from AIRLOCK_MASTER_KEY, and a control message of another instance is acted on
 * only once the database bears it out (`control(db)`, built once the database is open).
 */
async function connectCluster(config: Config, logger: Logger) {
  const onListenerError = (what: string) => (error: unknown) => logger.error({ err: error }, `a listener of ${what} failed`);
  if (!config.redisUrl) {
    return {
      transport: null,
      bus: createRunEventBus<RunRow>({ subscriberBuffer: config.subscriberBuffer }),
      control: () => ({
        revocations: createUserRevocations(onListenerError('user revocations')),
        cancellations: createLocalBroadcast<RunCancellation>(onListenerError('run cancellations')),
        mcpCatalog: createLocalBroadcast<McpCatalogChange>(onListenerError('MCP catalogue changes')),
      }),
    };
  }
  // loadConfig requires it with REDIS_URL (through DATABASE_URL); a Config built otherwise is refused here.
  const masterKey = config.masterKey;
  if (!masterKey) throw new ConfigError('Invalid configuration:\n  AIRLOCK_MASTER_KEY: is required with REDIS_URL (the messages between instances are signed with a key derived from it)');
  // Loaded only here: a single instance never loads the Redis client.
  const [{ connectRedis, describeRedisUrl }, { createRedisBroadcast, createRedisRunBus }] = await Promise.all([
    import('./cluster/redis.ts'),
    import('./cluster/bus.ts'),
  ]);
  const transport = await connectRedis({ url: config.redisUrl, prefix: config.redisPrefix, masterKey, logger: logger.child({ component: 'redis' }) });
  logger.info({ redis: describeRedisUrl(config.redisUrl), prefix: config.redisPrefix, instance: transport.instanceId }, 'live events and control travel over Redis');
  return {
    transport,
    bus: createRedisRunBus(transport, { subscriberBuffer: config.subscriberBuffer, logger }),
    control: (db: Db) => ({
      revocations: createRedisBroadcast(transport, 'revocation', userRevocationSchema, onListenerError('user revocations'), {
        confirm: (revocation) => confirmRevocation(db, revocation),
      }),
      cancellations: createRedisBroadcast(transport, 'cancel', runCancellationSchema, onListenerError('run cancellations'), {
        confirm: (cancellation) => confirmCancellation(db, cancellation),
      }),
      // A catalogue change only makes an instance reload the catalogue from the database.
      mcpCatalog: createRedisBroadcast(transport, 'mcp-catalog', mcpCatalogChangeSchema, onListenerError('MCP catalogue changes')),
    }),
  };
}

/** What the MCP catalogue works with (loading, following changes, the MCP server mutations). */
function catalogDepsOf({ db, registry, secrets, scrubber, logger, config, mcpCatalog }: AppServices): McpCatalogDeps {
  return mcpCatalogDeps({ db, registry, secrets, scrubber, logger, config, mcpCatalog });
}

/** What the GraphQL layer receives: the collaborators its resolvers use, no more. */
function graphqlDepsOf(services: AppServices): GraphqlDeps {
  const { db, registry, secrets, scrubber, logger, bus, revocations, runHost } = services;
  return { db, registry, secrets, scrubber, logger, bus, revocations, runHost, mcpCatalog: catalogDepsOf(services), timers: createTimerWheel() };
}

/** What `/mcp` receives. */
function mcpDepsOf({ db, registry, toolData, writer, bus, logger, metrics, config, cancellations, revocations }: AppServices): ServerDeps['mcp'] {
  return { db, registry, toolData, writer, bus, logger, metrics, config, cancellations, revocations };
}

/** The service: its parts plus the server on top of them. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const parts = await assembleParts(config, options);
  const { services } = parts;
  const graphql = graphqlDepsOf(services);
  const server = buildServer({
    config,
    logger: services.logger,
    authenticate: (token) => authenticate(services.db, token),
    revocations: services.revocations,
    timers: graphql.timers,
    context: (initial) => createContext(graphql, initial),
    mcp: mcpDepsOf(services),
    onStopped: parts.close,
    probes: { metrics: parts.metrics, readiness: parts.readiness, metricsToken: config.metricsToken },
  });
  return { services, server, admin: parts.admin, tracing: parts.tracing, stop: () => server.stop() };
}

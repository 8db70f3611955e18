import { z } from 'zod';

/**
 * The service configuration. This file is the ONLY reader of the environment: everything else
 * receives a frozen `Config`. Parsing fails with one line per bad variable, naming it and saying
 * what to do.
 *
 * Over 300 lines on purpose: it is one piece, the `Config` shape, the schema of every variable and
 * the parse that maps one onto the other must agree field by field, and only this file may read
 * the environment.
 */
export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; when absent the service embeds PGlite under `dataDir`. */
  readonly databaseUrl: string | null;
  /** Directory of the embedded database and generated key file; `memory://` keeps nothing. */
  readonly dataDir: string;
  readonly adminToken: string | null;
  /** 32-byte AES-256-GCM key for secrets at rest; null → generated key file (embedded mode only). */
  readonly masterKey: Buffer | null;
  /** Third-party tool modules: paths or package names, each default-exporting Tool[] or a factory. */
  readonly toolModules: readonly string[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly retentionDays: number;
  /** Largest accepted HTTP request body, in bytes. */
  readonly maxRequestBytes: number;
  /** Largest accepted websocket message, in bytes (the `ws` default of 100 MiB is far too generous). */
  readonly maxWsMessageBytes: number;
  /** A tool call still running after this many milliseconds is abandoned with a generic failure. */
  readonly toolTimeoutMs: number;
  /** A call to a remote MCP server (connect, list or call) abandoned after this many milliseconds. */
  readonly mcpCallTimeoutMs: number;
  /** How often a process renews its runs' leases (at most a third of the lease) and proves its MCP sessions alive. */
  readonly runHeartbeatMs: number;
  /** A RUNNING run's lease (ms): when it lapses, any instance continues the run from its last checkpoint. */
  readonly runLeaseMs: number;
  /** Continue the runs of a process that is gone (default); false settles them INTERRUPTED. */
  readonly resumeRuns: boolean;
  readonly stopTimeoutMs: number;
  /** Operations one graphql-ws connection may have open at once; each live run holds server state. */
  readonly maxSubscriptionsPerConnection: number;
  /**
   * RUNNING agent runs one user may have at once; one more start is refused (RUN_LIMIT_REACHED)
   * before anything is stored. 0 = no limit. Runs waiting for approval and MCP sessions do not count.
   */
  readonly maxRunningRunsPerUser: number;
  /** An MCP session with no request for this long is closed and its run settled COMPLETED (ms). */
  readonly mcpSessionIdleMs: number;
  /**
   * Open MCP sessions one user may have at once, across instances; opening one more closes the
   * user's least recently used session (its run settled COMPLETED). 0 = no limit. Sessions do
   * not count against maxRunningRunsPerUser.
   */
  readonly maxMcpSessionsPerUser: number;
  /** Largest GraphQL response (one subscription event each), in bytes; a larger one is refused with an error. */
  readonly maxResponseBytes: number;
  /** Browser origins allowed to call the API cross-origin (`scheme://host[:port]`); empty = none. */
  readonly corsOrigins: readonly string[];
  /** Redis for live events and control between instances; null = one instance, in-process bus. */
  readonly redisUrl: string | null;
  /** Prefix of this deployment's Redis channels (several deployments can share one Redis). */
  readonly redisPrefix: string;
  /** Events one live subscriber may fall behind before it is cut off (it can subscribe again and replay). */
  readonly subscriberBuffer: number;
  /** OpenTelemetry traces (the standard OTEL_* variables); null = no SDK loaded, no spans exported. */
  readonly tracing: TracingConfig | null;
  /** Bearer token of `GET /metrics`; null = the endpoint is off (404). */
  readonly metricsToken: string | null;
}

export interface TracingConfig {
  /** `otlp`: OTLP/HTTP (JSON) to `endpoint`; `console`: printed to stdout (for a look, not production). */
  readonly exporter: 'otlp' | 'console';
  /** The traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`). */
  readonly endpoint: string;
  /** OTEL_EXPORTER_OTLP_HEADERS (or _TRACES_HEADERS): sent to the collector; secrets, never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const MEMORY_DIR = 'memory://';

const integerFrom = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? null : value.trim()));

const masterKeySchema = optionalText.transform((value, ctx) => {
  if (value === null) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be 32 bytes, as 64 hex characters or base64 (generate one with `openssl rand -base64 32`)',
    });
    return z.NEVER;
  }
  return key;
});

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integerFrom(0, 65_535).default(4000),
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  DATABASE_URL: optionalText.refine(
    (value) => value === null || /^postgres(ql)?:\/\//.test(value),
    'must be a postgres:// or postgresql:// URL (unset it to use the embedded database)',
  ),
  AIRLOCK_DATA_DIR: z.string().trim().min(1).default('./data'),
  AIRLOCK_ADMIN_TOKEN: optionalText.refine(
    (value) => value === null || value.length >= 16,
    'must be at least 16 characters (generate one with `openssl rand -hex 24`)',
  ),
  AIRLOCK_MASTER_KEY: masterKeySchema,
  AIRLOCK_TOOL_MODULES: optionalText.transform((value) =>
    value === null
      ? []
      : value
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry.length > 0),
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AIRLOCK_RETENTION_DAYS: integerFrom(1, 36_500).default(30),
  AIRLOCK_MAX_REQUEST_BYTES: integerFrom(1_024, 100 * 1024 * 1024).default(1024 * 1024),
  AIRLOCK_MAX_WS_MESSAGE_BYTES: integerFrom(1_024, 100 * 1024 * 1024).default(256 * 1024),
  AIRLOCK_TOOL_TIMEOUT_MS: integerFrom(100, 3_600_000).default(30_000),
  AIRLOCK_MCP_CALL_TIMEOUT_MS: integerFrom(50, 600_000).default(15_000),
  AIRLOCK_RUN_HEARTBEAT_MS: integerFrom(50, 600_000).default(10_000),
  AIRLOCK_RUN_LEASE_MS: integerFrom(150, 3_600_000).default(15_000),
  AIRLOCK_RESUME_RUNS: z.enum(['true', 'false'], { error: 'must be true or false' }).default('true'),
  AIRLOCK_STOP_TIMEOUT_MS: integerFrom(100, 600_000).default(8_000),
  AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION: integerFrom(1, 100_000).default(100),
  AIRLOCK_MAX_RUNNING_RUNS_PER_USER: integerFrom(0, 100_000).default(8),
  AIRLOCK_MCP_SESSION_IDLE_MS: integerFrom(100, 86_400_000).default(600_000),
  AIRLOCK_MAX_MCP_SESSIONS_PER_USER: integerFrom(0, 100_000).default(16),
  AIRLOCK_MAX_RESPONSE_BYTES: integerFrom(1_024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  REDIS_URL: optionalText.refine(
    (value) => value === null || /^rediss?:\/\/[^/]/.test(value),
    'must be a redis:// or rediss:// URL (unset it to run one instance with the in-process bus)',
  ),
  AIRLOCK_REDIS_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1 to 64 letters, digits or : _ . -')
    .default('airlock:'),
  // At least four times the steps one run may publish at once (runtime/run-recorder.ts, 16): below it,
  // a dashboard that keeps up could be cut off by one burst.
  AIRLOCK_SUBSCRIBER_BUFFER: integerFrom(64, 1_000_000).default(10_000),
  AIRLOCK_CORS_ORIGINS: optionalText
    .transform((value) => (value === null ? [] : value.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0)))
    .refine((origins) => origins.every(isOrigin), 'must list origins such as https://console.example.com (scheme, host and port only), comma-separated'),
  OTEL_TRACES_EXPORTER: optionalText.refine(
    (value) => value === null || ['otlp', 'console', 'none'].includes(value),
    'must be one of: otlp, console, none (unset: otlp when OTEL_EXPORTER_OTLP_ENDPOINT is set)',
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.refine((value) => value === null || isHttpUrl(value), 'must be an http:// or https:// URL'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.refine((value) => value === null || isHttpUrl(value), 'must be an http:// or https:// URL'),
  OTEL_EXPORTER_OTLP_HEADERS: optionalText,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optionalText,
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(200).default('airlock'),
  AIRLOCK_METRICS_TOKEN: optionalText.refine(
    (value) => value === null || value.length >= 16,
    'must be at least 16 characters (generate one with `openssl rand -hex 24`)',
  ),
});

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `key=value` pairs separated by commas, values URL-encoded (the OTLP exporter specification's format). */
function parseOtlpHeaders(text: string | null): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // A value that is not URL-encoded is sent as written.
    }
    if (key !== '') headers[key] = value;
  }
  return headers;
}

/** Tracing is on when an OTLP endpoint is set (or OTEL_TRACES_EXPORTER asks for it), off otherwise. */
function tracingOf(env: z.infer<typeof envSchema>): TracingConfig | null {
  const exporter = env.OTEL_TRACES_EXPORTER ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : 'none');
  if (exporter === 'none') return null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  return Object.freeze({
    exporter: exporter as TracingConfig['exporter'],
    endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base.replace(/\/+$/, '')}/v1/traces`,
    headers: Object.freeze({ ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) }),
    serviceName: env.OTEL_SERVICE_NAME,
  });
}

/** An origin as browsers send it: `scheme://host[:port]`, no path, no wildcard. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Parses the environment; throws a ConfigError listing every bad variable. Never echoes values. */
export function loadConfig(environment: Environment = process.env): Config {
  const parsed = envSchema.safeParse(environment);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? 'environment');
      const message = issue.code === 'invalid_value' ? `must be one of: ${issue.values.join(', ')}` : issue.message;
      return `  ${variable}: ${message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const env = parsed.data;
  if (env.DATABASE_URL !== null && env.AIRLOCK_MASTER_KEY === null) {
    throw new ConfigError(
      'Invalid configuration:\n  AIRLOCK_MASTER_KEY: is required when DATABASE_URL is set, so that stored API keys ' +
        'survive a restart on any machine (generate one with `openssl rand -base64 32`)',
    );
  }
  if (env.REDIS_URL !== null && env.DATABASE_URL === null) {
    throw new ConfigError(
      'Invalid configuration:\n  REDIS_URL: needs DATABASE_URL (PostgreSQL): the embedded database serves one process, so there is ' +
        'nothing to share between instances; set DATABASE_URL to run several instances, or unset REDIS_URL',
    );
  }
  return Object.freeze({
    env: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.AIRLOCK_DATA_DIR,
    adminToken: env.AIRLOCK_ADMIN_TOKEN,
    masterKey: env.AIRLOCK_MASTER_KEY,
    toolModules: Object.freeze([...env.AIRLOCK_TOOL_MODULES]),
    logLevel: env.LOG_LEVEL,
    retentionDays: env.AIRLOCK_RETENTION_DAYS,
    maxRequestBytes: env.AIRLOCK_MAX_REQUEST_BYTES,
    maxWsMessageBytes: env.AIRLOCK_MAX_WS_MESSAGE_BYTES,
    toolTimeoutMs: env.AIRLOCK_TOOL_TIMEOUT_MS,
    mcpCallTimeoutMs: env.AIRLOCK_MCP_CALL_TIMEOUT_MS,
    runHeartbeatMs: env.AIRLOCK_RUN_HEARTBEAT_MS,
    runLeaseMs: env.AIRLOCK_RUN_LEASE_MS,
    resumeRuns: env.AIRLOCK_RESUME_RUNS === 'true',
    stopTimeoutMs: env.AIRLOCK_STOP_TIMEOUT_MS,
    maxSubscriptionsPerConnection: env.AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION,
    maxRunningRunsPerUser: env.AIRLOCK_MAX_RUNNING_RUNS_PER_USER,
    mcpSessionIdleMs: env.AIRLOCK_MCP_SESSION_IDLE_MS,
    maxMcpSessionsPerUser: env.AIRLOCK_MAX_MCP_SESSIONS_PER_USER,
    maxResponseBytes: env.AIRLOCK_MAX_RESPONSE_BYTES,
    corsOrigins: Object.freeze([...env.AIRLOCK_CORS_ORIGINS]),
    redisUrl: env.REDIS_URL,
    redisPrefix: env.AIRLOCK_REDIS_PREFIX,
    subscriberBuffer: env.AIRLOCK_SUBSCRIBER_BUFFER,
    tracing: tracingOf(env),
    metricsToken: env.AIRLOCK_METRICS_TOKEN,
  });
}

export function isMemoryDataDir(dataDir: string): boolean {
  return dataDir === MEMORY_DIR;
}

/** The values that must never appear in any output; fed to the log scrubber. */
export function secretValues(config: Config): string[] {
  const secrets: string[] = [];
  if (config.adminToken) secrets.push(config.adminToken);
  if (config.metricsToken) secrets.push(config.metricsToken);
  for (const value of Object.values(config.tracing?.headers ?? {})) if (value.length >= 8) secrets.push(value);
  if (config.masterKey) secrets.push(config.masterKey.toString('base64'), config.masterKey.toString('hex'));
  for (const url of [config.databaseUrl, config.redisUrl]) {
    if (!url) continue;
    secrets.push(url);
    try {
      const password = decodeURIComponent(new URL(url).password);
      if (password) secrets.push(password);
    } catch {
      // An unparsable URL fails later at connect time; there is no password to protect here.
    }
  }
  return secrets;
}

/**
 * A frozen copy of the whole process environment, for the admin `get_env` tools (which redact it
 * themselves). Read once by the caller; later changes to process.env are not reflected.
 */
export function environmentSnapshot(): Readonly<Record<string, string | undefined>> {
  return Object.freeze({ ...process.env });
}

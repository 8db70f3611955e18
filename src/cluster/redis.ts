import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ConfigError } from '../config.ts';
import type { Logger } from '../logger.ts';
import { BUS_REJECTION_REASONS, deriveBusKey, MAX_CLOCK_AHEAD_MS, MAX_MESSAGE_AGE_MS, openBusMessage, sealBusMessage, type BusRejectionReason } from './signing.ts';

/** The two channels every instance publishes on and listens to, under the configured prefix. */
export type RedisChannel = 'events' | 'control';
const CHANNELS: readonly RedisChannel[] = ['events', 'control'];

/**
 * Messages between instances over Redis pub/sub. Each message carries its origin (an id drawn at
 * start) and a key (a run id, a control message's name): an instance never receives its own
 * messages, and a listener can skip a message by its key without decoding the body. Every message is
 * signed with the deployment's bus key (src/cluster/signing.ts); one that is unsigned, badly signed,
 * stale, from the future or seen before is dropped before any listener sees it, and counted.
 */
export interface RedisTransport {
  readonly instanceId: string;
  /** Fire and forget: while Redis is away the message is dropped (counted), never queued in memory. `key` holds no tab. */
  publish(channel: RedisChannel, key: string, body: string): void;
  /** Messages of other instances on `channel`, in the order each instance published them. */
  onMessage(channel: RedisChannel, listener: (key: string, body: string) => void): void;
  /** Called each time the live feed from the other instances is lost (the subscriber connection dropped). */
  onLost(listener: () => void): void;
  /** True while the subscriber connection is up AND subscribed: messages of other instances arrive. */
  connected(): boolean;
  readonly stats: { published: number; dropped: number; received: number; outages: number };
  /** Messages dropped at the trust boundary, by reason (the bus adds `unconfirmed` control messages). */
  readonly rejections: BusRejections;
  close(): Promise<void>;
}

export interface BusRejections {
  record(reason: BusRejectionReason): void;
  /** Since start, every reason present (0 if none). */
  counts(): Readonly<Record<BusRejectionReason, number>>;
  /** Stops the pending log line (at close). */
  stop(): void;
}

/** At most one log line about dropped messages per this many ms (a flood must not flood the log). */
export const REJECTION_LOG_INTERVAL_MS = 10_000;

/**
 * Counts dropped messages and logs them in bursts: the first one at once, then at most one warn per
 * REJECTION_LOG_INTERVAL_MS with how many were dropped since the last line, by reason.
 */
export function createBusRejections(logger: Logger, intervalMs = REJECTION_LOG_INTERVAL_MS): BusRejections {
  const totals = Object.fromEntries(BUS_REJECTION_REASONS.map((reason) => [reason, 0])) as Record<BusRejectionReason, number>;
  let pending: Partial<Record<BusRejectionReason, number>> = {};
  let pendingCount = 0;
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (pendingCount === 0) return;
    logger.warn(
      // A summary string: the logger redacts fields named like secrets (`bad_mac` among them).
      { rejected: pendingCount, reasons: Object.entries(pending).map(([reason, count]) => `${reason}: ${count}`).join(', ') },
      `dropped ${pendingCount} message(s) from Redis: unsigned, badly signed, stale or replayed, or control messages the database does not bear out (every instance must have the same AIRLOCK_MASTER_KEY)`,
    );
    pending = {};
    pendingCount = 0;
  };
  return {
    record(reason) {
      totals[reason] += 1;
      pending[reason] = (pending[reason] ?? 0) + 1;
      pendingCount += 1;
      if (timer) return;
      flush();
      const quiet = () => {
        timer = null;
        if (pendingCount === 0) return;
        flush();
        timer = setTimeout(quiet, intervalMs);
        timer.unref();
      };
      timer = setTimeout(quiet, intervalMs);
      timer.unref();
    },
    counts: () => ({ ...totals }),
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

export interface RedisTransportOptions {
  readonly url: string;
  /** Prefix of the channel names (several deployments, or test files, can share one Redis). */
  readonly prefix: string;
  readonly logger: Logger;
  /**
   * AIRLOCK_MASTER_KEY, the same on every instance of the deployment: the bus key that signs and
   * checks every message is derived from it (never the key itself).
   */
  readonly masterKey: Buffer;
  /** How long the first connection may take before the start is refused (default 5 s). */
  readonly connectTimeoutMs?: number;
}

/** Where a Redis URL points, for messages: scheme, host, port and database; never the credentials. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
  } catch {
    return 'an unparsable URL';
  }
}

/** Reconnect quickly at first, then every 2 s, for ever: an outage ends when Redis is back. */
const retryStrategy = (attempt: number) => Math.min(50 * 2 ** attempt, 2_000);

/**
 * Connects the publisher and the subscriber connections and subscribes. Fails with a ConfigError
 * naming REDIS_URL (never its password) when Redis cannot be reached or refuses the credentials, so
 * that a misconfigured instance stops at start instead of serving without its live feed.
 */
export async function connectRedis(options: RedisTransportOptions): Promise<RedisTransport> {
  const { url, prefix, logger } = options;
  const where = describeRedisUrl(url);
  const instanceId = randomUUID();
  const busKey = deriveBusKey(options.masterKey);
  const rejections = createBusRejections(logger);
  let sequence = 0;
  /**
   * The last sequence number taken from each origin, and when (this clock): a message at or below it
   * is a replay. An origin silent for longer than a message may live is forgotten (its old messages
   * are stale by then).
   */
  const lastSeen = new Map<string, { sequence: number; at: number }>();
  const FORGET_AFTER_MS = MAX_MESSAGE_AGE_MS + MAX_CLOCK_AHEAD_MS;
  let lastSweep = Date.now();
  const channelName = (channel: RedisChannel) => `${prefix}${channel}`;
  const client = (role: string) =>
    new Redis(url, {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      // Nothing piles up in memory while Redis is away: commands fail at once instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      retryStrategy,
      connectionName: `airlock-${role}-${instanceId.slice(0, 8)}`,
    });
  const publisher = client('pub');
  const subscriber = client('sub');
  const listeners = new Map<string, ((key: string, body: string) => void)[]>();
  const lostListeners: (() => void)[] = [];
  const stats = { published: 0, dropped: 0, received: 0, outages: 0 };
  let subscribed = false;
  let closing = false;

  /** Logs once when a connection goes down and once when it is back; remembers the last error for the first line. */
  const watch = (connection: Redis, role: string, onDown: () => void, onUp: () => void) => {
    let lastError: Error | null = null;
    let up = false;
    let downSince = 0;
    connection.on('error', (error: Error) => (lastError = error));
    connection.on('close', () => {
      // Only the loss of a working connection is an outage (failed attempts while down are not).
      if (!up || closing) return;
      up = false;
      downSince = Date.now();
      logger.warn({ redis: where, connection: role, reason: lastError?.message }, `lost the ${role} connection to Redis (REDIS_URL); reconnecting`);
      onDown();
    });
    connection.on('ready', () => {
      if (downSince > 0) logger.info({ redis: where, connection: role, downMs: Date.now() - downSince }, `the ${role} connection to Redis is back`);
      up = true;
      downSince = 0;
      lastError = null;
      onUp();
    });
    return () => lastError;
  };

  const subscribe = () => subscriber.subscribe(...CHANNELS.map(channelName)).then(() => (subscribed = true));
  watch(publisher, 'publisher', () => undefined, () => undefined);
  const subscriberError = watch(
    subscriber,
    'subscriber',
    () => {
      subscribed = false;
      stats.outages += 1;
      for (const listener of lostListeners) listener();
    },
    () =>
      void subscribe().catch((error: unknown) =>
        logger.warn({ err: error, redis: where }, 'could not subscribe to the Redis channels; retrying at the next reconnect'),
      ),
  );
  subscriber.on('message', (channel: string, raw: string) => {
    const now = Date.now();
    const opened = openBusMessage(busKey, channel, raw, now);
    if (!opened.ok) return rejections.record(opened.reason);
    const { origin, key, body } = opened.message;
    if (origin === instanceId) return;
    const seen = lastSeen.get(origin);
    if (seen && opened.message.sequence <= seen.sequence) return rejections.record('replayed');
    lastSeen.set(origin, { sequence: opened.message.sequence, at: now });
    if (now - lastSweep > FORGET_AFTER_MS) {
      lastSweep = now;
      for (const [id, entry] of lastSeen) if (entry.at < now - FORGET_AFTER_MS) lastSeen.delete(id);
    }
    stats.received += 1;
    for (const listener of listeners.get(channel) ?? []) listener(key, body);
  });

  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
    await subscribe();
  } catch (error) {
    closing = true;
    rejections.stop();
    publisher.disconnect();
    subscriber.disconnect();
    const reason = subscriberError()?.message ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError(
      `Invalid configuration:\n  REDIS_URL: could not connect to Redis at ${where} (${scrubUrl(reason, url)}); start Redis there, or correct REDIS_URL (unset it to run one instance without Redis)`,
    );
  }

  return {
    instanceId,
    stats,
    rejections,
    publish(channel, key, body) {
      if (publisher.status !== 'ready') {
        stats.dropped += 1;
        return;
      }
      stats.published += 1;
      const name = channelName(channel);
      const sealed = sealBusMessage(busKey, name, { origin: instanceId, sequence: (sequence += 1), sentAt: Date.now(), key, body });
      publisher.publish(name, sealed).catch(() => (stats.dropped += 1));
    },
    onMessage(channel, listener) {
      const name = channelName(channel);
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
    },
    onLost: (listener) => void lostListeners.push(listener),
    connected: () => subscribed && subscriber.status === 'ready',
    async close() {
      closing = true;
      rejections.stop();
      subscriber.disconnect();
      // QUIT lets the publishes already sent reach Redis; a publisher that is down just disconnects.
      await Promise.race([publisher.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      publisher.disconnect();
    },
  };
}

/** An error message with the URL's credentials taken out (a driver may quote the URL it was given). */
function scrubUrl(message: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return message;
  }
  let scrubbed = message.split(url).join(describeRedisUrl(url));
  for (const secret of [parsed.password, decodeURIComponent(parsed.password)]) {
    if (secret.length > 0) scrubbed = scrubbed.split(secret).join('***');
  }
  return scrubbed;
}

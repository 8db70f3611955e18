import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ConfigError } from '../config.ts';
import type { Logger } from '../logger.ts';

/** The two channels every instance publishes on and listens to, under the configured prefix. */
export type RedisChannel = 'events' | 'control';
const CHANNELS: readonly RedisChannel[] = ['events', 'control'];

/**
 * Messages between instances over Redis pub/sub. Each message carries its origin (an id drawn at
 * start) and a key (a run id, a control message's name): an instance never receives its own
 * messages, and a listener can skip a message by its key without decoding the body.
 */
export interface RedisTransport {
  readonly instanceId: string;
  /** Fire and forget: while Redis is away the message is dropped (counted), never queued in memory. */
  publish(channel: RedisChannel, key: string, body: string): void;
  /** Messages of other instances on `channel`, in the order each instance published them. */
  onMessage(channel: RedisChannel, listener: (key: string, body: string) => void): void;
  /** Called each time the live feed from the other instances is lost (the subscriber connection dropped). */
  onLost(listener: () => void): void;
  /** True while the subscriber connection is up AND subscribed: messages of other instances arrive. */
  connected(): boolean;
  readonly stats: { published: number; dropped: number; received: number; outages: number };
  close(): Promise<void>;
}

export interface RedisTransportOptions {
  readonly url: string;
  /** Prefix of the channel names (several deployments, or test files, can share one Redis). */
  readonly prefix: string;
  readonly logger: Logger;
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
  subscriber.on('message', (channel: string, message: string) => {
    const origin = message.indexOf('\t');
    const keyEnd = message.indexOf('\t', origin + 1);
    if (origin < 0 || keyEnd < 0 || message.slice(0, origin) === instanceId) return;
    stats.received += 1;
    const key = message.slice(origin + 1, keyEnd);
    const body = message.slice(keyEnd + 1);
    for (const listener of listeners.get(channel) ?? []) listener(key, body);
  });

  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
    await subscribe();
  } catch (error) {
    closing = true;
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
    publish(channel, key, body) {
      if (publisher.status !== 'ready') {
        stats.dropped += 1;
        return;
      }
      stats.published += 1;
      publisher.publish(channelName(channel), `${instanceId}\t${key}\t${body}`).catch(() => (stats.dropped += 1));
    },
    onMessage(channel, listener) {
      const name = channelName(channel);
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
    },
    onLost: (listener) => void lostListeners.push(listener),
    connected: () => subscribed && subscriber.status === 'ready',
    async close() {
      closing = true;
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

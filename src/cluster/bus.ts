import { z } from 'zod';
import type { RunRow } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { createLocalBroadcast, type Broadcast } from '../runtime/broadcast.ts';
import { EventBusUnavailableError, RESUME_REASONS, type RunBusEvent, type RunEventBus } from '../runtime/events.ts';
import { createRunEventBus, type RunEventBusOptions } from '../runtime/local-bus.ts';
import type { RedisTransport } from './redis.ts';

const LOST =
  'Lost the live feed of the other Airlock instances (Redis is unreachable); events of runs driven elsewhere may be missing. Subscribe again: runEvents replays what is stored, the list feeds start with a fresh snapshot.';
const UNAVAILABLE =
  'The live feed of the other Airlock instances is not available right now (Redis is reconnecting); subscribe again in a moment (runEvents replays what is stored).';

/**
 * A message from another instance is outside input. Its signature was checked by the transport
 * (only an instance holding the deployment's master key sent it); its shape is checked here before
 * anyone reads it (a message that does not fit is dropped and counted). Events are not checked
 * against the database: they only feed live views (what is stored never changes on an event), and
 * a lookup per event would delay and reorder them; control messages are (createRedisBroadcast). Dates travel as ISO strings and are revived;
 * step payloads are passed on as they were stored (they were built by our own recorder).
 */
const date = z.coerce.date();
const runRowSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  state_version: z.number().int(),
  created_at: date,
  heartbeat_at: date,
  finished_at: date.nullable(),
  content_purged_at: date.nullable(),
  cancel_requested_at: date.nullable(),
});
const usage = z.object({ promptTokens: z.number(), completionTokens: z.number(), cost: z.number() });
const payload = z.record(z.string(), z.unknown());
/**
 * The publishing instance's clock (epoch ms), delivered unchanged. Absent from an instance of an
 * older version (during a rolling deploy): then the time of receipt, so its events still arrive.
 */
const publishedAt = z
  .number()
  .finite()
  .nonnegative()
  .optional()
  .transform((time) => time ?? Date.now());
const eventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), runId: z.string(), publishedAt, run: runRowSchema }),
  z.object({
    type: z.literal('step'),
    publishedAt,
    runId: z.string(),
    sequence: z.number().int().positive(),
    stateVersion: z.number().int(),
    progress: z.object({ iterations: z.number().int(), usage }),
    full: payload,
    filtered: payload,
  }),
  z.object({
    type: z.literal('suspended'),
    publishedAt,
    runId: z.string(),
    calls: z.array(z.looseObject({ id: z.string(), name: z.string() })),
    previews: z.array(payload),
    digest: z.string(),
    run: runRowSchema,
  }),
  z.object({
    type: z.literal('decided'),
    publishedAt,
    runId: z.string(),
    digest: z.string(),
    approved: z.boolean(),
    decidedBy: z.object({ id: z.string(), name: z.string() }),
    run: runRowSchema,
  }),
  z.object({
    type: z.literal('resumed'),
    publishedAt,
    runId: z.string(),
    fromSequence: z.number().int().positive(),
    reason: z.enum(RESUME_REASONS),
    run: runRowSchema,
  }),
  z.object({ type: z.literal('finished'), runId: z.string(), publishedAt, finalContent: z.string().nullable(), run: runRowSchema.nullable() }),
]);

function decodeEvent(key: string, body: string): RunBusEvent<RunRow> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const result = eventSchema.safeParse(parsed);
  if (!result.success || result.data.runId !== key) return null;
  return result.data as unknown as RunBusEvent<RunRow>;
}

export interface RedisRunBusOptions extends RunEventBusOptions {
  readonly logger: Logger;
}

/**
 * The run event bus of one instance among several. Every event is delivered here at once (an
 * instance's own watchers never wait for Redis) and published to the other instances, which deliver
 * it to their watchers of that run and of the list feeds; a message for a run nobody watches here is
 * not even decoded.
 *
 * When the feed of the other instances is lost, every subscriber that depends on it — list feeds, and
 * watchers of runs not driven here — is ended with EventBusUnavailableError (it can subscribe again and
 * replay); watchers of runs this instance drives go on. While it is down, such subscriptions fail at
 * once instead of waiting for events that cannot come.
 */
export function createRedisRunBus(transport: RedisTransport, options: RedisRunBusOptions): RunEventBus<RunRow> {
  const local = createRunEventBus<RunRow>(options);
  /** Runs this instance drives: from their start, claim or takeover to their end or suspension. */
  const driven = new Set<string>();
  let rejected = 0;
  const dependsOnOthers = (runId: string | null) => runId === null || !driven.has(runId);

  transport.onMessage('events', (key, body) => {
    if (!local.hasSubscribers(key)) return;
    const event = decodeEvent(key, body);
    if (event) return local.deliver(event);
    if (rejected++ === 0) options.logger.warn({ runId: key.slice(0, 64) }, 'dropped a malformed run event from Redis (logged once)');
  });
  transport.onLost(() => local.interrupt(dependsOnOthers, new EventBusUnavailableError(LOST)));

  const unavailable = <T>(): AsyncIterableIterator<T> => {
    const iterator: AsyncIterableIterator<T> = {
      next: () => Promise.reject(new EventBusUnavailableError(UNAVAILABLE)),
      return: () => Promise.resolve({ value: undefined, done: true }),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  };

  return {
    publish(event) {
      // A parked run is driven by nobody until an instance claims it (`decided`).
      if (event.type === 'finished' || event.type === 'suspended') driven.delete(event.runId);
      else if (event.type === 'started' || event.type === 'decided' || event.type === 'resumed') driven.add(event.runId);
      // Stamped once, here, by the local bus: the other instances receive this very time.
      const published = local.publish(event);
      transport.publish('events', event.runId, JSON.stringify(published));
    },
    subscribe(runId, subscribeOptions) {
      if (subscribeOptions?.drivenHere) driven.add(runId);
      else if (!transport.connected() && !driven.has(runId)) return unavailable();
      return local.subscribe(runId);
    },
    subscribeAll(subscribeOptions) {
      return transport.connected() ? local.subscribeAll(subscribeOptions) : unavailable();
    },
    deliver: (event) => local.deliver(event),
    watchedRuns: () => local.watchedRuns(),
    subscriberCount: () => local.subscriberCount(),
    deepestQueue: () => local.deepestQueue(),
  };
}

export interface RedisBroadcastOptions<Message> {
  /**
   * Asked before a message from another instance is acted on: true only when the database (where
   * the state lives) bears it out — a cancellation only for a run whose cancel was requested, a
   * revocation only for a user who really lost access. A message it refuses (or that it cannot
   * check: the error is reported) is dropped and counted as `unconfirmed`. Messages of this
   * instance are not asked about: they were published after the change committed.
   */
  readonly confirm?: (message: Message) => Promise<boolean>;
}

/**
 * A broadcast that reaches every instance: delivered here at once, and to the others over the
 * control channel under `name`; what arrives is checked against `schema` (anything else is dropped),
 * then, with `confirm`, against the database. A message published while Redis is away reaches this
 * instance only.
 */
export function createRedisBroadcast<Message>(
  transport: RedisTransport,
  name: string,
  schema: z.ZodType<Message>,
  onListenerError: (error: unknown) => void,
  options: RedisBroadcastOptions<Message> = {},
): Broadcast<Message> {
  const local = createLocalBroadcast<Message>(onListenerError);
  const { confirm } = options;
  transport.onMessage('control', (key, body) => {
    if (key !== name) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return;
    }
    const result = schema.safeParse(parsed);
    if (!result.success) return;
    const message = result.data;
    if (!confirm) return local.publish(message);
    void confirm(message).then(
      (confirmed) => (confirmed ? local.publish(message) : transport.rejections.record('unconfirmed')),
      (error: unknown) => {
        transport.rejections.record('unconfirmed');
        onListenerError(error);
      },
    );
  });
  return {
    publish(message) {
      local.publish(message);
      transport.publish('control', name, JSON.stringify(message));
    },
    subscribe: (listener) => local.subscribe(listener),
  };
}

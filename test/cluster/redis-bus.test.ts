import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRedisBroadcast, createRedisRunBus } from '../../src/cluster/bus.ts';
import { connectRedis, type RedisTransport } from '../../src/cluster/redis.ts';
import { deriveBusKey, sealBusMessage } from '../../src/cluster/signing.ts';
import { ConfigError } from '../../src/config.ts';
import type { RunRow } from '../../src/db/database.ts';
import { createLogger, LogRing, SecretScrubber } from '../../src/logger.ts';
import { EventBusUnavailableError, SubscriberOverflowError, type RunBusEvent, type RunBusEventDraft, type RunEventBus } from '../../src/runtime/events.ts';
import { userRevocationSchema, type UserRevocation } from '../../src/services/user-revocations.ts';
import { LogCollector } from '../helpers/app.ts';
import { freePort, REDIS_SERVER, startPrivateRedis, TEST_REDIS_URL, uniquePrefix, type PrivateRedis } from '../helpers/redis.ts';

function testLogger() {
  const destination = new LogCollector();
  return { logger: createLogger({ level: 'info', scrubber: new SecretScrubber(), ring: new LogRing(), destination }), destination };
}

const messages = (logs: LogCollector): string[] => logs.lines.map((line) => (JSON.parse(line) as { msg: string }).msg);

const run = (id: string, status = 'RUNNING'): RunRow =>
  ({
    id,
    status,
    state_version: 0,
    created_at: new Date('2026-12-01T10:00:00.000Z'),
    heartbeat_at: new Date('2026-12-01T10:00:01.000Z'),
    finished_at: status === 'RUNNING' ? null : new Date('2026-12-01T10:00:02.000Z'),
    content_purged_at: null,
    cancel_requested_at: null,
    user_id: 'u1',
    prompt: 'hello',
  }) as unknown as RunRow;

const step = (runId: string, sequence: number): RunBusEventDraft<RunRow> => ({
  type: 'step',
  runId,
  sequence,
  stateVersion: 0,
  progress: { iterations: sequence, usage: { promptTokens: 1, completionTokens: 1, cost: 0 } },
  full: { kind: 'LLM', content: `full ${sequence}` } as never,
  filtered: { kind: 'LLM', content: null } as never,
});

async function take<T>(iterator: AsyncIterator<T>, count: number, timeoutMs = 5_000): Promise<T[]> {
  const taken: T[] = [];
  const deadline = Date.now() + timeoutMs;
  while (taken.length < count) {
    const result = await Promise.race([
      iterator.next(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${taken.length} of ${count} events arrived`)), Math.max(1, deadline - Date.now()))),
    ]);
    if (result.done) break;
    taken.push(result.value);
  }
  return taken;
}

const waitFor = async (condition: () => boolean, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

interface Instance {
  transport: RedisTransport;
  bus: RunEventBus<RunRow>;
  logs: LogCollector;
}

/** The master key of the deployment these instances form (the bus key is derived from it). */
const masterKey = randomBytes(32);
/** A message as an instance of this deployment would send it: how these tests speak for another instance. */
let sentByOthers = 0;
const signed = (channel: string, key: string, body: string) =>
  sealBusMessage(deriveBusKey(masterKey), channel, { origin: 'someone-else', sequence: (sentByOthers += 1), sentAt: Date.now(), key, body });

const opened: RedisTransport[] = [];
async function instance(url: string, prefix: string, subscriberBuffer?: number): Promise<Instance> {
  const { logger, destination } = testLogger();
  const transport = await connectRedis({ url, prefix, logger, masterKey });
  opened.push(transport);
  return { transport, bus: createRedisRunBus(transport, { logger, subscriberBuffer }), logs: destination };
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((transport) => transport.close()));
});

describe.skipIf(!TEST_REDIS_URL)('the run event bus over Redis (shared Redis, own prefix)', () => {
  it("should deliver another instance's events of a watched run in order, with dates revived, and an instance's own events once", async () => {
    const prefix = uniquePrefix('bus');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const runId = randomUUID();
    const onA = a.bus.subscribe(runId);
    const onB = b.bus.subscribe(runId);
    a.bus.publish({ type: 'started', runId, run: run(runId) });
    for (let sequence = 1; sequence <= 20; sequence += 1) a.bus.publish(step(runId, sequence));
    a.bus.publish({ type: 'finished', runId, finalContent: 'done', run: run(runId, 'COMPLETED') });

    const remote = await take(onB, 22);
    expect(remote.map((event) => (event.type === 'step' ? event.sequence : event.type))).toEqual(['started', ...Array.from({ length: 20 }, (_, i) => i + 1), 'finished']);
    const finished = remote.at(-1) as Extract<RunBusEvent<RunRow>, { type: 'finished' }>;
    expect(finished.run!.finished_at).toBeInstanceOf(Date);
    expect(finished.run!.created_at.toISOString()).toBe('2026-12-01T10:00:00.000Z');
    expect((remote[1] as Extract<RunBusEvent<RunRow>, { type: 'step' }>).full).toEqual({ kind: 'LLM', content: 'full 1' });

    const local = await take(onA, 22);
    expect(local).toHaveLength(22);
    // Nothing more: the instance does not receive its own messages back from Redis.
    await new Promise((resolve) => setTimeout(resolve, 200));
    a.bus.publish(step(runId, 99));
    expect((await take(onA, 1))[0]).toMatchObject({ type: 'step', sequence: 99 });
    await onA.return!();
    await onB.return!();
  });

  it('should give a list-level subscriber of another instance only the event types it asked for', async () => {
    const prefix = uniquePrefix('list');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const all = b.bus.subscribeAll({ types: ['started', 'finished'] });
    const [first, second] = [randomUUID(), randomUUID()];
    a.bus.publish({ type: 'started', runId: first, run: run(first) });
    a.bus.publish(step(first, 1));
    a.bus.publish({ type: 'started', runId: second, run: run(second) });
    a.bus.publish({ type: 'finished', runId: first, finalContent: null, run: null });
    const events = await take(all, 3);
    expect(events.map((event) => `${event.type}:${event.runId}`)).toEqual([`started:${first}`, `started:${second}`, `finished:${first}`]);
    await all.return!();
  });

  it('should drop a malformed message (logged once) and go on delivering the valid ones', async () => {
    const prefix = uniquePrefix('garbage');
    const b = await instance(TEST_REDIS_URL!, prefix);
    const runId = randomUUID();
    const watching = b.bus.subscribe(runId);
    const raw = new Redis(TEST_REDIS_URL!);
    try {
      const send = (body: string) => raw.publish(`${prefix}events`, signed(`${prefix}events`, runId, body));
      await send('not json');
      await send(JSON.stringify({ type: 'step', runId, sequence: -1 }));
      await send(JSON.stringify({ ...step(randomUUID(), 1), publishedAt: Date.now() })); // its key names another run
      await send(JSON.stringify({ type: 'started', runId, publishedAt: Date.now(), run: { ...run(runId), created_at: 'not a date' } }));
      await raw.publish(`${prefix}events`, 'no tabs at all');
      await send(JSON.stringify({ ...step(runId, 1), publishedAt: Date.now() }));
      const [event] = await take(watching, 1);
      expect(event).toMatchObject({ type: 'step', sequence: 1 });
      expect(messages(b.logs).filter((msg) => msg.includes('malformed run event'))).toHaveLength(1);
    } finally {
      raw.disconnect();
      await watching.return!();
    }
  });

  it("should deliver an event with the publishing instance's publishedAt, unchanged", async () => {
    const prefix = uniquePrefix('published-at');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const runId = randomUUID();
    const onA = a.bus.subscribe(runId);
    const onB = b.bus.subscribe(runId);
    const before = Date.now();
    a.bus.publish(step(runId, 1));
    const [here] = await take(onA, 1);
    const [there] = await take(onB, 1);
    expect(here!.publishedAt).toBeGreaterThanOrEqual(before);
    expect(here!.publishedAt).toBeLessThanOrEqual(Date.now());
    expect(there!.publishedAt).toBe(here!.publishedAt);
    // A time no clock of this machine reads now: what arrives is the sender's, not the receiver's.
    const raw = new Redis(TEST_REDIS_URL!);
    try {
      await raw.publish(`${prefix}events`, signed(`${prefix}events`, runId, JSON.stringify({ ...step(runId, 2), publishedAt: 1_234_567 })));
      const [planted] = await take(onB, 1);
      expect(planted).toMatchObject({ sequence: 2, publishedAt: 1_234_567 });
    } finally {
      raw.disconnect();
      await onA.return!();
      await onB.return!();
    }
  });

  it('should drop a message whose publishedAt is not a finite non-negative number, and time one without it (an older instance) at receipt', async () => {
    const prefix = uniquePrefix('bad-published-at');
    const b = await instance(TEST_REDIS_URL!, prefix);
    const runId = randomUUID();
    const watching = b.bus.subscribe(runId);
    const raw = new Redis(TEST_REDIS_URL!);
    try {
      const send = (body: string) => raw.publish(`${prefix}events`, signed(`${prefix}events`, runId, body));
      const body = JSON.stringify(step(runId, 1));
      await send(JSON.stringify({ ...step(runId, 2), publishedAt: String(Date.now()) }));
      await send(JSON.stringify({ ...step(runId, 3), publishedAt: -1 }));
      await send(body.replace(/}$/, ',"publishedAt":NaN}'));
      await send(body.replace(/}$/, ',"publishedAt":1e999}')); // Infinity once parsed
      await send(JSON.stringify({ type: 'finished', runId, finalContent: null, run: null, publishedAt: null }));
      await send(JSON.stringify({ ...step(runId, 7), publishedAt: 42 }));
      const before = Date.now();
      await send(body); // none: sent by an instance of an older version
      const [event, unstamped] = await take(watching, 2);
      expect(event).toMatchObject({ type: 'step', sequence: 7, publishedAt: 42 });
      expect(unstamped).toMatchObject({ type: 'step', sequence: 1 });
      expect(unstamped!.publishedAt).toBeGreaterThanOrEqual(before);
      expect(unstamped!.publishedAt).toBeLessThanOrEqual(Date.now());
      expect(messages(b.logs).filter((msg) => msg.includes('malformed run event'))).toHaveLength(1);
    } finally {
      raw.disconnect();
      await watching.return!();
    }
  });

  it('should cut off a subscriber that stops reading at its buffer, after what it had queued', async () => {
    const prefix = uniquePrefix('slow');
    const a = await instance(TEST_REDIS_URL!, prefix);
    const b = await instance(TEST_REDIS_URL!, prefix, 10);
    const runId = randomUUID();
    const slow = b.bus.subscribe(runId);
    const fast = b.bus.subscribe(runId);
    const fastReader = take(fast, 50);
    for (let sequence = 1; sequence <= 50; sequence += 1) {
      a.bus.publish(step(runId, sequence));
      // A reader that keeps up is never cut off (within a burst of 5, even a fast one is behind).
      if (sequence % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await fastReader).toHaveLength(50);
    expect(await take(slow, 10)).toHaveLength(10);
    await expect(slow.next()).rejects.toThrow(SubscriberOverflowError);
    expect(b.bus.subscriberCount()).toBe(1);
    await fast.return!();
  });

  it('should carry a broadcast to every instance once, and drop one that does not fit its schema', async () => {
    const prefix = uniquePrefix('broadcast');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const errors: unknown[] = [];
    const onA = createRedisBroadcast(a.transport, 'revocation', userRevocationSchema, (error) => errors.push(error));
    const onB = createRedisBroadcast(b.transport, 'revocation', userRevocationSchema, (error) => errors.push(error));
    const seenA: UserRevocation[] = [];
    const seenB: UserRevocation[] = [];
    onA.subscribe((message) => seenA.push(message));
    onB.subscribe((message) => seenB.push(message));
    const raw = new Redis(TEST_REDIS_URL!);
    try {
      await raw.publish(`${prefix}control`, signed(`${prefix}control`, 'revocation', JSON.stringify({ userId: 'x', reason: 'GONE' })));
      onA.publish({ userId: 'u-1', reason: 'DEACTIVATED' });
      await waitFor(() => seenB.length === 1, 'the revocation on B');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seenB).toEqual([{ userId: 'u-1', reason: 'DEACTIVATED' }]);
      expect(seenA).toEqual([{ userId: 'u-1', reason: 'DEACTIVATED' }]);
      expect(errors).toEqual([]);
    } finally {
      raw.disconnect();
    }
  });
});

describe.skipIf(!TEST_REDIS_URL)('the trust boundary of the bus over Redis (shared Redis, own prefix)', () => {
  it('should drop and count what no instance of the deployment sent (unsigned, another key, stale, future, replayed), deliver what one did, and log the drops once per burst', async () => {
    const prefix = uniquePrefix('forged');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const runId = randomUUID();
    const watching = b.bus.subscribe(runId);
    const channel = `${prefix}events`;
    const raw = new Redis(TEST_REDIS_URL!);
    const capture = new Redis(TEST_REDIS_URL!);
    try {
      const captured: string[] = [];
      capture.on('message', (_channel: string, message: string) => captured.push(message));
      await capture.subscribe(channel);
      a.bus.publish(step(runId, 1));
      expect((await take(watching, 1))[0]).toMatchObject({ type: 'step', sequence: 1 });
      await waitFor(() => captured.length === 1, 'the captured message');

      const body = (sequence: number) => JSON.stringify(step(runId, sequence));
      const sealed = (key: Buffer, sentAt: number, sequence: number) =>
        sealBusMessage(key, channel, { origin: 'outsider', sequence: (sentByOthers += 1), sentAt, key: runId, body: body(sequence) });
      await raw.publish(channel, `outsider\t${runId}\t${body(101)}`);
      await raw.publish(channel, sealed(deriveBusKey(randomBytes(32)), Date.now(), 102));
      await raw.publish(channel, sealed(deriveBusKey(masterKey), Date.now() - 10 * 60_000, 103));
      await raw.publish(channel, sealed(deriveBusKey(masterKey), Date.now() + 10 * 60_000, 104));
      // A's own message, captured and published again: its sequence was taken already.
      await raw.publish(channel, captured[0]!);
      a.bus.publish(step(runId, 2));
      // Delivered in publish order: once step 2 is here, every forgery before it was dropped.
      expect((await take(watching, 1))[0]).toMatchObject({ type: 'step', sequence: 2 });
      expect(b.transport.rejections.counts()).toEqual({ unsigned: 1, bad_mac: 1, stale: 1, future: 1, replayed: 1, unconfirmed: 0 });
      expect(b.transport.stats.received).toBe(2);
      expect(messages(b.logs).filter((msg) => msg.startsWith('dropped'))).toHaveLength(1);
      expect(a.transport.rejections.counts().unsigned).toBe(1);
    } finally {
      raw.disconnect();
      capture.disconnect();
      await watching.return!();
    }
  });

  it('should act on a control message of another instance only once the database bears it out', async () => {
    const prefix = uniquePrefix('confirm');
    const [a, b] = [await instance(TEST_REDIS_URL!, prefix), await instance(TEST_REDIS_URL!, prefix)];
    const errors: unknown[] = [];
    const asked: UserRevocation[] = [];
    const onA = createRedisBroadcast(a.transport, 'revocation', userRevocationSchema, (error) => errors.push(error));
    const onB = createRedisBroadcast(b.transport, 'revocation', userRevocationSchema, (error) => errors.push(error), {
      confirm: async (message) => {
        asked.push(message);
        if (message.userId === 'broken') throw new Error('the database is away');
        return message.userId === 'really-revoked';
      },
    });
    const seenB: UserRevocation[] = [];
    onB.subscribe((message) => seenB.push(message));
    onA.publish({ userId: 'still-active', reason: 'DEACTIVATED' });
    onA.publish({ userId: 'broken', reason: 'DEACTIVATED' });
    onA.publish({ userId: 'really-revoked', reason: 'DEACTIVATED' });
    await waitFor(() => seenB.length === 1 && b.transport.rejections.counts().unconfirmed === 2, 'the three revocations on B');
    expect(seenB).toEqual([{ userId: 'really-revoked', reason: 'DEACTIVATED' }]);
    expect(asked.map((message) => message.userId)).toEqual(['still-active', 'broken', 'really-revoked']);
    expect(errors).toEqual([new Error('the database is away')]);
    // What an instance publishes itself is not asked about: it published after the change committed.
    onB.publish({ userId: 'local', reason: 'DELETED' });
    expect(seenB.at(-1)).toEqual({ userId: 'local', reason: 'DELETED' });
    expect(asked).toHaveLength(3);
  });
});

describe.skipIf(!REDIS_SERVER)('Redis faults (a private redis-server, stopped by pid)', () => {
  const servers: PrivateRedis[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('should refuse to start, naming REDIS_URL and never its password, when Redis is unreachable or refuses the password', async () => {
    const { logger } = testLogger();
    const password = `canary-${randomUUID()}`;
    const closed = `redis://:${password}@127.0.0.1:${await freePort()}`;
    const unreachable = await connectRedis({ url: closed, prefix: 'x:', logger, masterKey, connectTimeoutMs: 1_000 }).catch((error: unknown) => error);
    expect(unreachable).toBeInstanceOf(ConfigError);
    expect((unreachable as Error).message).toMatch(/REDIS_URL: could not connect to Redis at redis:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED/);
    expect((unreachable as Error).message).not.toContain(password);

    const guarded = await startPrivateRedis({ password: 'the-right-one' });
    servers.push(guarded);
    const wrong = await connectRedis({ url: `redis://:${password}@127.0.0.1:${guarded.port}`, prefix: 'x:', logger, masterKey }).catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(ConfigError);
    expect((wrong as Error).message).toMatch(/REDIS_URL: could not connect .*(WRONGPASS|invalid password|NOAUTH)/i);
    expect((wrong as Error).message).not.toContain(password);
    const right = await connectRedis({ url: guarded.url, prefix: 'x:', logger, masterKey });
    expect(right.connected()).toBe(true);
    await right.close();
  });

  it('should end the subscribers that depend on other instances when Redis goes away, keep those of local runs, log once per outage, and recover', async () => {
    const redis = await startPrivateRedis();
    servers.push(redis);
    const prefix = uniquePrefix('outage');
    const [a, b] = [await instance(redis.url, prefix), await instance(redis.url, prefix)];
    const remoteRun = randomUUID();
    const localRun = randomUUID();
    const watchRemote = b.bus.subscribe(remoteRun);
    const list = b.bus.subscribeAll();
    const watchLocal = b.bus.subscribe(localRun, { drivenHere: true });
    b.bus.publish({ type: 'started', runId: localRun, run: run(localRun) });
    // Parked: driven by nobody until an instance (perhaps another one) claims it.
    const parkedRun = randomUUID();
    const watchParked = b.bus.subscribe(parkedRun, { drivenHere: true });
    b.bus.publish({ type: 'started', runId: parkedRun, run: run(parkedRun) });
    b.bus.publish({ type: 'suspended', runId: parkedRun, calls: [], previews: [], digest: 'd', run: run(parkedRun, 'WAITING_FOR_APPROVAL') });
    a.bus.publish({ type: 'started', runId: remoteRun, run: run(remoteRun) });
    expect((await take(watchRemote, 1))[0]!.type).toBe('started');

    await redis.stop();
    await waitFor(() => !b.transport.connected(), 'B to notice the outage');
    // Many events during the outage: none throws, none is queued for later, one line per connection.
    for (let sequence = 1; sequence <= 100; sequence += 1) a.bus.publish(step(remoteRun, sequence));
    b.bus.publish(step(localRun, 1));
    await expect(take(watchRemote, 1)).rejects.toThrow(EventBusUnavailableError);
    const listEvents: string[] = [];
    await expect(
      (async () => {
        for (;;) {
          const next = await list.next();
          if (next.done) return;
          listEvents.push(next.value.type);
        }
      })(),
    ).rejects.toThrow(/Lost the live feed of the other Airlock instances/);
    expect(listEvents).toEqual(['started', 'started', 'suspended', 'started']);
    expect((await take(watchLocal, 2)).map((event) => event.type)).toEqual(['started', 'step']);
    expect((await take(watchParked, 2)).map((event) => event.type)).toEqual(['started', 'suspended']);
    await expect(watchParked.next()).rejects.toThrow(EventBusUnavailableError);
    await expect(b.bus.subscribe(randomUUID()).next()).rejects.toThrow(/subscribe again in a moment/);
    await expect(b.bus.subscribeAll().next()).rejects.toThrow(EventBusUnavailableError);
    expect(a.transport.stats.dropped).toBeGreaterThanOrEqual(100);

    await redis.start();
    await waitFor(() => a.transport.connected() && b.transport.connected(), 'both instances to reconnect', 15_000);
    const again = b.bus.subscribe(remoteRun);
    // A's publisher reconnects on its own schedule (connected() speaks of the subscriber): a publish
    // made before it is back is dropped and counted, so publish until one is sent.
    let last = 100;
    await waitFor(() => {
      const sent = a.transport.stats.published;
      a.bus.publish(step(remoteRun, (last += 1)));
      return a.transport.stats.published > sent;
    }, "A's publisher to be back");
    expect((await take(again, 1))[0]).toMatchObject({ type: 'step', sequence: last });
    await again.return!();
    await watchLocal.return!();

    for (const logs of [a.logs, b.logs]) {
      await waitFor(() => messages(logs).filter((msg) => /connection to Redis is back/.test(msg)).length === 2, 'both connections to log their return');
      const lost = messages(logs).filter((msg) => /lost the (subscriber|publisher) connection/.test(msg));
      const back = messages(logs).filter((msg) => /connection to Redis is back/.test(msg));
      expect(lost.sort()).toEqual(['lost the publisher connection to Redis (REDIS_URL); reconnecting', 'lost the subscriber connection to Redis (REDIS_URL); reconnecting']);
      expect(back).toHaveLength(2);
    }
  }, 60_000);
});

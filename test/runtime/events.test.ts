import { describe, expect, it } from 'vitest';
import { createRunEventBus, EventBusUnavailableError, SubscriberOverflowError } from '../../src/runtime/events.ts';

describe('the in-process run event bus', () => {
  it('should stamp publishedAt once, handing every subscriber the same stamped object, and keep the time of a delivered event', async () => {
    const bus = createRunEventBus<null>();
    const [one, two, list] = [bus.subscribe('r1'), bus.subscribe('r1'), bus.subscribeAll()];
    const before = Date.now();
    const published = bus.publish({ type: 'finished', runId: 'r1', finalContent: null, run: null });
    const after = Date.now();
    expect(published.publishedAt).toBeGreaterThanOrEqual(before);
    expect(published.publishedAt).toBeLessThanOrEqual(after);
    for (const subscriber of [one, two, list]) expect((await subscriber.next()).value).toBe(published);
    // Published elsewhere (another instance): its time is kept.
    bus.deliver({ type: 'finished', runId: 'r1', finalContent: null, run: null, publishedAt: 7 });
    expect((await one.next()).value).toMatchObject({ publishedAt: 7 });
  });

  it('should fail a subscriber that is waiting for its next event with the interruption, not end it silently', async () => {
    const bus = createRunEventBus<null>();
    const waiting = bus.subscribe('r1');
    const other = bus.subscribe('r2');
    const list = bus.subscribeAll();
    const pending = waiting.next();
    bus.interrupt((runId) => runId === 'r1' || runId === null, new EventBusUnavailableError('feed lost'));
    await expect(pending).rejects.toThrow('feed lost');
    await expect(list.next()).rejects.toThrow(EventBusUnavailableError);
    // Untouched: a subscriber the interruption did not name.
    bus.publish({ type: 'finished', runId: 'r2', finalContent: null, run: null });
    expect((await other.next()).value).toMatchObject({ type: 'finished', runId: 'r2' });
    expect(bus.subscriberCount()).toBe(1);
    expect(bus.hasSubscribers('r1')).toBe(false);
    expect(bus.hasSubscribers('r2')).toBe(true);
  });

  it('should deliver what a subscriber had queued before the interruption, then fail it', async () => {
    const bus = createRunEventBus<null>();
    const behind = bus.subscribe('r1');
    bus.publish({ type: 'finished', runId: 'r1', finalContent: 'a', run: null });
    bus.interrupt(() => true, new EventBusUnavailableError('feed lost'));
    expect((await behind.next()).value).toMatchObject({ finalContent: 'a' });
    await expect(behind.next()).rejects.toThrow('feed lost');
  });

  it('should cut off a subscriber at the configured buffer', async () => {
    const bus = createRunEventBus<null>({ subscriberBuffer: 10 });
    const slow = bus.subscribe('r1');
    for (let index = 0; index < 11; index += 1) bus.publish({ type: 'finished', runId: 'r1', finalContent: String(index), run: null });
    for (let index = 0; index < 10; index += 1) await slow.next();
    await expect(slow.next()).rejects.toThrow(SubscriberOverflowError);
    expect(bus.hasSubscribers('r1')).toBe(false);
  });

  it('should cut off only the subscriber that fell behind: a reader of the same run that keeps up gets every event', async () => {
    const bus = createRunEventBus<null>({ subscriberBuffer: 10 });
    const stalled = bus.subscribe('r1');
    const reading = bus.subscribe('r1');
    for (let index = 0; index < 25; index += 1) {
      // Publishing never waits for a reader: it returns at once whatever the subscribers do.
      bus.publish({ type: 'finished', runId: 'r1', finalContent: String(index), run: null });
      expect((await reading.next()).value).toMatchObject({ finalContent: String(index) });
    }
    expect(bus.subscriberCount()).toBe(1);
    expect(bus.deepestQueue()).toBe(0);
    // The one that stopped reading keeps what it had queued (its first 10 events), then learns it was cut off.
    for (let index = 0; index < 10; index += 1) expect((await stalled.next()).value).toMatchObject({ finalContent: String(index) });
    await expect(stalled.next()).rejects.toThrow(/fell 10 events behind and was cut off; subscribe again/);
  });
});

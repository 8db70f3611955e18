import { describe, expect, it } from 'vitest';
import { EventBusUnavailableError, SubscriberOverflowError, type RunBusEvent } from '../../src/runtime/events.ts';
import { createRunEventBus, isListenable } from '../../src/runtime/local-bus.ts';

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

describe('listening to a subscription of the in-process bus (ListenableSubscription)', () => {
  const finished = (finalContent: string) => ({ type: 'finished' as const, runId: 'r1', finalContent, run: null });
  const contents = (events: readonly RunBusEvent<null>[]) => events.map((event) => (event.type === 'finished' ? event.finalContent : event.type));
  const listenable = (subscription: AsyncIterator<RunBusEvent<null>>) => {
    if (!isListenable(subscription)) throw new Error('the subscription cannot be listened to');
    return subscription;
  };

  it('should hand over what was queued first, then each event as it is delivered, and queue again while paused', () => {
    const bus = createRunEventBus<null>();
    const subscription = listenable(bus.subscribe('r1'));
    bus.publish(finished('queued'));
    const heard: RunBusEvent<null>[] = [];
    const ends: (Error | null)[] = [];
    subscription.listen((event) => void heard.push(event), (failure) => void ends.push(failure));
    bus.publish(finished('live'));
    expect(contents(heard)).toEqual(['queued', 'live']);
    subscription.pause();
    bus.publish(finished('while paused'));
    expect(contents(heard)).toEqual(['queued', 'live']);
    expect(bus.deepestQueue()).toBe(1);
    subscription.listen((event) => void heard.push(event), (failure) => void ends.push(failure));
    expect(contents(heard)).toEqual(['queued', 'live', 'while paused']);
    void subscription.return?.();
    expect(ends).toEqual([null]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('should stop handing over queued events as soon as the listener pauses (its consumer became busy)', () => {
    const bus = createRunEventBus<null>();
    const subscription = listenable(bus.subscribe('r1'));
    for (const content of ['a', 'b', 'c']) bus.publish(finished(content));
    const heard: RunBusEvent<null>[] = [];
    subscription.listen((event) => {
      heard.push(event);
      subscription.pause();
    }, () => undefined);
    expect(contents(heard)).toEqual(['a']);
    expect(bus.deepestQueue()).toBe(2);
  });

  it('should cut off a paused listener past its bound, and tell it so only after it took what was queued before', () => {
    const bus = createRunEventBus<null>({ subscriberBuffer: 2 });
    const subscription = listenable(bus.subscribe('r1'));
    const ends: (Error | null)[] = [];
    const heard: RunBusEvent<null>[] = [];
    subscription.listen(() => subscription.pause(), (failure) => void ends.push(failure));
    for (const content of ['taken', 'a', 'b', 'over']) bus.publish(finished(content));
    // Cut off at once (the bus lets go of it), told at its next listen, after the two it queued.
    expect(bus.subscriberCount()).toBe(0);
    expect(ends).toEqual([]);
    subscription.listen((event) => void heard.push(event), (failure) => void ends.push(failure));
    expect(contents(heard)).toEqual(['a', 'b']);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeInstanceOf(SubscriberOverflowError);
  });

  it('should tell a listener of an interruption at once, with its failure', () => {
    const bus = createRunEventBus<null>();
    const subscription = listenable(bus.subscribeAll());
    const ends: (Error | null)[] = [];
    subscription.listen(() => undefined, (failure) => void ends.push(failure));
    bus.interrupt(() => true, new EventBusUnavailableError('feed lost'));
    expect(ends.map((failure) => failure?.message)).toEqual(['feed lost']);
  });
});

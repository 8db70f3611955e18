import { describe, expect, it } from 'vitest';
import { createCoalescingOutbox } from '../../src/runtime/coalesce.ts';
import { SubscriberOverflowError } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';

/** A clock the test moves by hand, and timers that fire when it passes them. */
function manualClock() {
  let time = 0;
  return {
    now: () => time,
    advance: async (ms: number) => {
      time += ms;
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
}

describe('the coalescing outbox of a live list feed', () => {
  it('should deliver a key at most once per window and always its latest value', async () => {
    const clock = manualClock();
    const outbox = createCoalescingOutbox<string, number>({ windowMs: 30, maxPending: 10, now: clock.now });
    outbox.offer('run', 1);
    expect((await outbox.next()).value).toEqual({ key: 'run', value: 1 });
    for (let value = 2; value <= 50; value++) outbox.offer('run', value);
    expect(outbox.pending).toBe(1);
    const start = clock.now();
    const next = outbox.next();
    await clock.advance(31);
    expect((await next).value).toEqual({ key: 'run', value: 50 });
    expect(clock.now() - start).toBeGreaterThanOrEqual(30);
    outbox.close();
  });

  it('should deliver an urgent value (a change of status) at once, inside the window, with the latest value', async () => {
    const clock = manualClock();
    const outbox = createCoalescingOutbox<string, string>({ windowMs: 60_000, maxPending: 10, now: clock.now });
    outbox.offer('run', 'RUNNING, 1 call');
    await outbox.next();
    outbox.offer('run', 'RUNNING, 2 calls');
    expect(outbox.pending).toBe(1);
    // Without urgency this waits a minute; the test would time out.
    outbox.offer('run', 'COMPLETED', true, true);
    expect((await outbox.next()).value).toEqual({ key: 'run', value: 'COMPLETED' });
    expect(outbox.pending).toBe(0);
    outbox.close();
  });

  it('should deliver the last value of a key and then forget the key', async () => {
    const outbox = createCoalescingOutbox<string, string>({ windowMs: 5, maxPending: 10 });
    outbox.offer('run', 'RUNNING');
    await outbox.next();
    outbox.offer('run', 'RUNNING again');
    outbox.offer('run', 'COMPLETED', true);
    expect((await outbox.next()).value).toEqual({ key: 'run', value: 'COMPLETED' });
    expect(outbox.pending).toBe(0);
    outbox.close();
    expect((await outbox.next()).done).toBe(true);
  });

  it('should cut off a reader that stopped reading once too many keys wait, with an error saying what to do', async () => {
    const outbox = createCoalescingOutbox<string, number>({ windowMs: 5, maxPending: 3 });
    for (let run = 0; run < 3; run++) for (let value = 0; value < 100; value++) outbox.offer(`run-${run}`, value);
    expect(outbox.pending).toBe(3);
    outbox.offer('run-4', 0);
    const failure = await outbox.next().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SubscriberOverflowError);
    expect((failure as Error).message).toMatch(/fell behind on 3 runs.*subscribe again for a fresh snapshot/);
    expect(outbox.pending).toBe(0);
  });
});

describe('the list-level topic of the run bus', () => {
  it('should carry every run, only the types asked for, and keep per-run topics as they are', async () => {
    const bus = createRunEventBus<string>();
    const all = bus.subscribeAll();
    const lifecycle = bus.subscribeAll({ types: ['started', 'finished'] });
    const one = bus.subscribe('a');
    bus.publish({ type: 'started', runId: 'a', run: 'row a' });
    bus.publish({ type: 'started', runId: 'b', run: 'row b' });
    bus.publish({ type: 'decided', runId: 'b', digest: 'd', approved: true, decidedBy: { id: 'u', name: 'n' }, run: 'row b' });
    bus.publish({ type: 'finished', runId: 'b', finalContent: null, run: 'row b' });
    const ids = async (iterator: AsyncIterator<{ type: string; runId: string }>, count: number) => {
      const seen: string[] = [];
      for (let i = 0; i < count; i++) {
        const { value } = await iterator.next();
        seen.push(`${value.type}:${value.runId}`);
      }
      return seen;
    };
    expect(await ids(all, 4)).toEqual(['started:a', 'started:b', 'decided:b', 'finished:b']);
    expect(await ids(lifecycle, 3)).toEqual(['started:a', 'started:b', 'finished:b']);
    expect(await ids(one, 1)).toEqual(['started:a']);
    expect(bus.subscriberCount()).toBe(3);
    await all.return?.();
    await lifecycle.return?.();
    await one.return?.();
    expect(bus.subscriberCount()).toBe(0);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCoalescingOutbox } from '../../src/runtime/coalesce.ts';
import { createTimerWheel } from '../../src/runtime/timer-wheel.ts';

describe('the timer wheel', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const now = () => Date.now();

  it('should run each callback never before its deadline and at most one slot after, in order', async () => {
    const wheel = createTimerWheel({ resolutionMs: 10, now });
    const start = now();
    const ran: [string, number][] = [];
    const at = (name: string, delayMs: number) => wheel.schedule(delayMs, () => ran.push([name, now() - start]));
    // Deadlines at least two slots apart fall in different slots wherever the clock stands; b1 and
    // b2 share theirs and run in the order scheduled.
    at('d', 250);
    at('b1', 47);
    at('a', 25);
    at('b2', 47);
    at('zero', 0);
    for (let step = 0; step < 300; step++) await vi.advanceTimersByTimeAsync(1);
    expect(ran.map(([name]) => name)).toEqual(['zero', 'a', 'b1', 'b2', 'd']);
    const deadline: Record<string, number> = { zero: 0, a: 25, b1: 47, b2: 47, d: 250 };
    for (const [name, when] of ran) {
      expect(when, name).toBeGreaterThanOrEqual(deadline[name]!);
      expect(when, name).toBeLessThanOrEqual(deadline[name]! + 10);
    }
    expect(wheel.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('should hold ten thousand deadlines on one timer', async () => {
    const wheel = createTimerWheel({ now });
    let ran = 0;
    for (let index = 0; index < 10_000; index++) wheel.schedule(250 + (index % 200), () => ran++);
    expect(wheel.pending).toBe(10_000);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(ran).toBe(10_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('should not run a cancelled callback, and let a cancellation after the run do nothing', async () => {
    const wheel = createTimerWheel({ now });
    const ran: string[] = [];
    const cancelFirst = wheel.schedule(20, () => ran.push('first'));
    const cancelSecond = wheel.schedule(20, () => ran.push('second'));
    const cancelOnly = wheel.schedule(500, () => ran.push('only in its slot'));
    cancelFirst();
    cancelOnly();
    expect(wheel.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['second']);
    cancelSecond();
    expect(wheel.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('should run what a callback schedules, and an earlier deadline scheduled later first', async () => {
    const wheel = createTimerWheel({ now });
    const ran: string[] = [];
    wheel.schedule(100, () => {
      ran.push('outer');
      wheel.schedule(30, () => ran.push('inner'));
    });
    wheel.schedule(500, () => ran.push('late'));
    wheel.schedule(10, () => ran.push('early, scheduled last'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['early, scheduled last', 'outer', 'inner', 'late']);
  });

  it('should carry the coalescing windows of a thousand outboxes on one timer, each delivering its latest value', async () => {
    const wheel = createTimerWheel({ now });
    const outboxes = Array.from({ length: 1_000 }, () => createCoalescingOutbox<string, number>({ windowMs: 250, maxPending: 10, now, schedule: wheel.schedule }));
    for (const outbox of outboxes) {
      outbox.offer('run', 1);
      expect((await outbox.next()).value).toEqual({ key: 'run', value: 1 });
      // Inside the window: these wait for its end, the latest replacing the others.
      outbox.offer('run', 2);
      outbox.offer('run', 3);
    }
    expect(wheel.pending).toBe(1_000);
    expect(vi.getTimerCount()).toBe(1);
    const next = outboxes.map((outbox) => outbox.next());
    await vi.advanceTimersByTimeAsync(300);
    for (const delivered of await Promise.all(next)) expect(delivered.value).toEqual({ key: 'run', value: 3 });
    // A closed outbox cancels its deadline.
    outboxes[0]!.offer('run', 4);
    outboxes[0]!.offer('run', 5);
    expect(wheel.pending).toBe(1);
    outboxes[0]!.close();
    expect(wheel.pending).toBe(0);
  });
});

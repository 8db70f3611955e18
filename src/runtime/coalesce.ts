import { SubscriberOverflowError } from './events.ts';

/**
 * One subscriber's outbox of keyed updates (for the live runs list: one key per run), coalesced:
 * a key is delivered at most once per `windowMs`; what arrives inside a window replaces what was
 * waiting (the trailing edge is delivered, so the latest value is never dropped). An `urgent`
 * value (for the runs list: a change of status) does not wait for the window: it goes out at once,
 * with whatever was waiting folded into it, and opens a new window. Memory is one
 * entry per key with an undelivered value; past `maxPending` keys the outbox fails with
 * SubscriberOverflowError instead of growing (a reader that stopped reading).
 */
export interface CoalescingOutbox<Key, Value> {
  /**
   * Replaces the key's waiting value; `last` (the key's final value) forgets the key once
   * delivered; `urgent` delivers it without waiting for the key's window.
   */
  offer(key: Key, value: Value, last?: boolean, urgent?: boolean): void;
  /** A value of the key was delivered outside the outbox (a snapshot): its window starts now. */
  sent(key: Key): void;
  /** The next due value, waiting if none; done once closed; rejects once failed. */
  next(): Promise<IteratorResult<{ key: Key; value: Value }>>;
  fail(error: Error): void;
  close(): void;
  /** Keys with an undelivered value (for tests and metrics). */
  readonly pending: number;
}

export function createCoalescingOutbox<Key, Value>(options: {
  readonly windowMs: number;
  readonly maxPending: number;
  /** Default `performance.now()`. */
  readonly now?: () => number;
  /**
   * Runs a callback after a delay, returning its cancellation: the instance's timer wheel
   * (timer-wheel.ts), so that thousands of outboxes share one timer. Default: one `setTimeout` each.
   */
  readonly schedule?: (delayMs: number, run: () => void) => () => void;
}): CoalescingOutbox<Key, Value> {
  const { windowMs, maxPending } = options;
  const now = options.now ?? (() => performance.now());
  const schedule = options.schedule ?? defaultSchedule;
  const waiting = new Map<Key, { value: Value; last: boolean }>();
  /** When each key was last delivered; dropped once its window is over and it is offered again, or after its last value. */
  const lastSent = new Map<Key, number>();
  const due = new Set<Key>();
  /** Per key waiting for its window's end: the cancellation of that deadline. */
  const timers = new Map<Key, () => void>();
  let reader: ((result: IteratorResult<{ key: Key; value: Value }>) => void) | null = null;
  let rejectReader: ((error: Error) => void) | null = null;
  let failure: Error | null = null;
  let closed = false;

  const take = (): { key: Key; value: Value } | null => {
    const key = due.values().next();
    if (key.done) return null;
    due.delete(key.value);
    const entry = waiting.get(key.value)!;
    waiting.delete(key.value);
    if (entry.last) lastSent.delete(key.value);
    else lastSent.set(key.value, now());
    return { key: key.value, value: entry.value };
  };

  const markDue = (key: Key) => {
    due.add(key);
    if (!reader) return;
    const resolve = reader;
    reader = rejectReader = null;
    resolve({ value: take()!, done: false });
  };

  const clear = () => {
    for (const cancel of timers.values()) cancel();
    timers.clear();
    waiting.clear();
    due.clear();
    lastSent.clear();
  };

  return {
    offer(key, value, last = false, urgent = false) {
      if (closed || failure) return;
      if (!waiting.has(key) && waiting.size >= maxPending) {
        this.fail(
          new SubscriberOverflowError(
            `This subscriber fell behind on ${maxPending} runs and was cut off; subscribe again for a fresh snapshot (and read the events as they come).`,
          ),
        );
        return;
      }
      waiting.set(key, { value, last });
      if (due.has(key)) return; // delivered at its turn, with the latest value
      if (urgent) {
        timers.get(key)?.();
        timers.delete(key);
        markDue(key);
        return;
      }
      if (timers.has(key)) return; // delivered when its window ends, with the latest value
      const at = (lastSent.get(key) ?? -Infinity) + windowMs;
      const wait = at - now();
      if (wait <= 0) {
        lastSent.delete(key);
        markDue(key);
        return;
      }
      timers.set(
        key,
        schedule(wait, () => {
          timers.delete(key);
          markDue(key);
        }),
      );
    },
    sent(key) {
      lastSent.set(key, now());
    },
    next() {
      const ready = take();
      if (ready) return Promise.resolve({ value: ready, done: false });
      if (failure) return Promise.reject(failure);
      if (closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => {
        reader = resolve;
        rejectReader = reject;
      });
    },
    fail(error) {
      if (closed || failure) return;
      failure = error;
      clear();
      const reject = rejectReader;
      reader = rejectReader = null;
      reject?.(error);
    },
    close() {
      if (closed) return;
      closed = true;
      clear();
      const resolve = reader;
      reader = rejectReader = null;
      resolve?.({ value: undefined, done: true });
    },
    get pending() {
      return waiting.size;
    },
  };
}

function defaultSchedule(delayMs: number, run: () => void): () => void {
  const timer = setTimeout(run, delayMs);
  return () => clearTimeout(timer);
}

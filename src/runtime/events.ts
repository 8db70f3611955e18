import type { PendingCallPreview } from './approval.ts';
import type { ToolCall } from './llm.ts';
import type { StoredStep } from './privacy.ts';

/**
 * What happens to a run, as it happens. Published only after the matching row is written. `Run` is
 * the stored run row (the service layer's type; the runtime only passes it along): the events that
 * change it carry it, so no reader has to load it again.
 */
export type RunBusEvent<Run = unknown> =
  | { readonly type: 'started'; readonly runId: string }
  | {
      readonly type: 'step';
      readonly runId: string;
      readonly sequence: number;
      /** Verbatim: for admins' live stream. */
      readonly full: StoredStep;
      /** At the run's privacy level, exactly as stored: for everyone else. */
      readonly filtered: StoredStep;
    }
  | {
      readonly type: 'suspended';
      readonly runId: string;
      /** Every call of the waiting turn (none has run) and the previews of its write calls. */
      readonly calls: readonly ToolCall[];
      readonly previews: readonly PendingCallPreview[];
      readonly digest: string;
      /** The run as parked (WAITING_FOR_APPROVAL). */
      readonly run: Run;
    }
  | {
      readonly type: 'finished';
      readonly runId: string;
      /** The live final answer, which the initiator always receives even when it is not stored. */
      readonly finalContent: string | null;
      /**
       * The run as settled; null when this process's settlement did not produce the current row
       * (settled elsewhere, its write failed, or the incomplete-audit flag was stored after it):
       * readers load it then.
       */
      readonly run: Run | null;
    };

/**
 * Typed per-run topics. `subscribe` registers at once (not on first read), so a subscriber taken
 * before a run starts misses nothing. The in-process implementation serves one process; a
 * distributed one (Redis pub/sub, say) can implement the same interface for several replicas.
 */
export interface RunEventBus<Run = unknown> {
  publish(event: RunBusEvent<Run>): void;
  /** Events of one run from now on; `return()` unsubscribes. */
  subscribe(runId: string): AsyncIterableIterator<RunBusEvent<Run>>;
  /** Open subscriptions (for tests and metrics). */
  subscriberCount(): number;
}

/**
 * A subscriber that falls this many events behind is cut off (its iteration throws) rather than
 * letting memory grow without bound; it can resume with `runEvents`, which replays from storage.
 */
export const SUBSCRIBER_BUFFER = 10_000;

export class SubscriberOverflowError extends Error {
  override readonly name = 'SubscriberOverflowError';
}

interface Channel<Run> {
  readonly queue: RunBusEvent<Run>[];
  waiter: ((result: IteratorResult<RunBusEvent<Run>>) => void) | null;
  failure: Error | null;
  closed: boolean;
}

export function createRunEventBus<Run = unknown>(): RunEventBus<Run> {
  const topics = new Map<string, Set<Channel<Run>>>();
  let subscribers = 0;

  const close = (runId: string, channel: Channel<Run>) => {
    if (channel.closed) return;
    channel.closed = true;
    subscribers -= 1;
    const set = topics.get(runId);
    set?.delete(channel);
    if (set?.size === 0) topics.delete(runId);
    channel.waiter?.({ value: undefined, done: true });
    channel.waiter = null;
  };

  return {
    publish(event) {
      for (const channel of topics.get(event.runId) ?? []) {
        if (channel.waiter) {
          const resolve = channel.waiter;
          channel.waiter = null;
          resolve({ value: event, done: false });
        } else if (channel.queue.length >= SUBSCRIBER_BUFFER) {
          channel.failure = new SubscriberOverflowError(`A subscriber of run ${event.runId} fell ${SUBSCRIBER_BUFFER} events behind.`);
          close(event.runId, channel);
        } else {
          channel.queue.push(event);
        }
      }
    },
    subscribe(runId) {
      const channel: Channel<Run> = { queue: [], waiter: null, failure: null, closed: false };
      let set = topics.get(runId);
      if (!set) topics.set(runId, (set = new Set()));
      set.add(channel);
      subscribers += 1;
      const iterator: AsyncIterableIterator<RunBusEvent<Run>> = {
        next() {
          const queued = channel.queue.shift();
          if (queued) return Promise.resolve({ value: queued, done: false });
          if (channel.failure) return Promise.reject(channel.failure);
          if (channel.closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => (channel.waiter = resolve));
        },
        return() {
          channel.queue.length = 0;
          close(runId, channel);
          return Promise.resolve({ value: undefined, done: true });
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
      };
      return iterator;
    },
    subscriberCount: () => subscribers,
  };
}

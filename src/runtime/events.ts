import { DomainError } from '../errors.ts';
import type { PendingCallPreview } from './approval.ts';
import type { ToolCall } from './llm.ts';
import type { StoredStep } from './stored-step.ts';
import type { PricedUsage } from './usage.ts';

/** What a run has done so far (its row holds these only once it is parked or settled). */
export interface RunProgress {
  /** LLM steps so far (the settled row's count leaves out a synthesis call). */
  readonly iterations: number;
  readonly usage: PricedUsage;
}

/**
 * Why another process continues a run: its owner's lease lapsed (a crash, a pause), its owner
 * handed it over while stopping (a deploy), or the restarted process of an embedded database
 * picked up the runs of the one before.
 */
export const RESUME_REASONS = ['LEASE_EXPIRED', 'HANDED_OVER', 'RESTARTED'] as const;
export type ResumeReason = (typeof RESUME_REASONS)[number];

/**
 * What happens to a run, as it happens. Published only after the matching row is written. `Run` is
 * the stored run row (the service layer's type; the runtime only passes it along): the events that
 * change it carry it, so no reader has to load it again.
 */
export type RunBusEvent<Run = unknown> = RunBusEventDraft<Run> & {
  /**
   * When the event was published on the bus (epoch ms, the publishing instance's clock): stamped by
   * the bus that first received it (createRunEventBus's `publish`), kept unchanged by every
   * instance it reaches over Redis; readers measure their lag from it.
   */
  readonly publishedAt: number;
};

/**
 * An event as its publisher hands it to the bus. The bus stamps `publishedAt` itself, not each of
 * the dozen publishers: one clock reading, taken as late as possible, before any subscriber sees
 * the event (all of them share the one stamped object).
 */
export type RunBusEventDraft<Run = unknown> =
  | { readonly type: 'started'; readonly runId: string; /** The run as created (RUNNING). */ readonly run: Run }
  | {
      readonly type: 'step';
      readonly runId: string;
      readonly sequence: number;
      /** The run's state version while this step ran (the row's, as of the last park, claim or start). */
      readonly stateVersion: number;
      /** Totals up to and including this step. */
      readonly progress: RunProgress;
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
      readonly type: 'decided';
      readonly runId: string;
      /** The turn that was decided. */
      readonly digest: string;
      readonly approved: boolean;
      readonly decidedBy: { readonly id: string; readonly name: string };
      /** The run as claimed for the decision (RUNNING again). */
      readonly run: Run;
    }
  | {
      readonly type: 'resumed';
      readonly runId: string;
      /** The sequence the continued run's next step takes: every step before it is stored. */
      readonly fromSequence: number;
      readonly reason: ResumeReason;
      /** The run as claimed (RUNNING, a new lease epoch, one more resume). */
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
 * before a run starts misses nothing. The in-process implementation serves one process; the Redis
 * one (src/cluster/bus.ts) implements the same interface for several instances.
 */
export interface RunEventBus<Run = unknown> {
  /** Stamps the event's `publishedAt` (now) and delivers it. */
  publish(event: RunBusEventDraft<Run>): void;
  /**
   * Events of one run from now on; `return()` unsubscribes. `drivenHere`: the caller is about to
   * drive this run in this process, so its events never depend on another instance.
   */
  subscribe(runId: string, options?: { readonly drivenHere?: boolean }): AsyncIterableIterator<RunBusEvent<Run>>;
  /**
   * The list-level topic: events of every run from now on (only the given types, when listed), in
   * publication order per run; same registration and overflow rules as `subscribe`. The live list
   * feeds read it; a distributed bus serves it from one shared channel.
   */
  subscribeAll(options?: { readonly types?: readonly RunBusEvent['type'][] }): AsyncIterableIterator<RunBusEvent<Run>>;
  /**
   * Delivers an event to this process's subscribers only, keeping its `publishedAt`: one published
   * by another instance, or the end of a run read from storage because its own event never came
   * (its process died between storing the end and publishing it).
   */
  deliver(event: RunBusEvent<Run>): void;
  /** The runs with a watcher in this process (per-run subscriptions; the list feeds not counted). */
  watchedRuns(): string[];
  /** Open subscriptions (for tests and metrics). */
  subscriberCount(): number;
  /**
   * Events waiting, unread, in the fullest subscriber queue of this process: how far its slowest
   * reader lags behind the bus (metrics; a reader cut off at `subscriberBuffer` no longer counts).
   */
  deepestQueue(): number;
}

/**
 * A subscriber that falls this many events behind is cut off (its iteration throws) rather than
 * letting memory grow without bound; it can resume with `runEvents`, which replays from storage.
 */
export const SUBSCRIBER_BUFFER = 10_000;

/**
 * A subscriber fell too far behind and was cut off. A domain error (code `SUBSCRIBER_OVERFLOW`):
 * its message is ours, says what happened and what to do next, and reaches the client unmasked.
 */
export class SubscriberOverflowError extends DomainError {
  override readonly name = 'SubscriberOverflowError';
}

/**
 * The bus lost the live feed of other instances (a distributed bus whose connection dropped): a
 * subscriber that depends on it is told so (code `EVENT_BUS_UNAVAILABLE`) rather than left waiting.
 */
export class EventBusUnavailableError extends DomainError {
  override readonly name = 'EventBusUnavailableError';
}

/**
 * The in-process bus, with what a distributed bus built on it needs: whether anyone here listens to
 * a run (so a message nobody reads need not be decoded) and a way to cut off the subscribers that
 * depend on the other instances.
 */
export interface LocalRunEventBus<Run = unknown> extends RunEventBus<Run> {
  /** Returns the event as delivered: stamped, the one object every subscriber here receives. */
  publish(event: RunBusEventDraft<Run>): RunBusEvent<Run>;
  /** True when a subscriber of this run, or of every run, is open here. */
  hasSubscribers(runId: string): boolean;
  /**
   * Ends every subscription for which `affected` is true (`runId` null: a list-level one) with
   * `error`: their next read throws it, after the events already queued.
   */
  interrupt(affected: (runId: string | null) => boolean, error: Error): void;
}

export interface RunEventBusOptions {
  /** Events a subscriber may fall behind before it is cut off (default SUBSCRIBER_BUFFER). */
  readonly subscriberBuffer?: number;
}

/**
 * A subscription of the in-process bus (and of the Redis bus, which delivers through one) can be
 * listened to instead of read: `listen` hands each event to a callback as it is delivered, with
 * no promise per event and per subscriber (a run watched ten thousand times: graphql/plugins/
 * shared-execution.ts). While paused, events queue as for a reader, with the same bound.
 */
export interface ListenableSubscription<Event> extends AsyncIterableIterator<Event> {
  /**
   * From now on hands each event to `listener` as it is delivered, first those queued, until
   * `pause()`. `ended` is called once, when the subscription has ended and every event queued
   * before its end was handed over: with the failure that ended it (SubscriberOverflowError,
   * EventBusUnavailableError), or null.
   */
  listen(listener: (event: Event) => void, ended: (failure: Error | null) => void): void;
  /** Events queue (bounded) until the next `listen`. */
  pause(): void;
}

export function isListenable<Event>(events: AsyncIterator<Event>): events is ListenableSubscription<Event> {
  return typeof (events as Partial<ListenableSubscription<Event>>).listen === 'function';
}

interface Channel<Run> {
  /** For list-level channels: the event types it wants (null: all). */
  readonly types: ReadonlySet<string> | null;
  readonly queue: RunBusEvent<Run>[];
  /** The pending read, if any: resolved with the next event or the end, rejected with `failure`. */
  waiter: { resolve: (result: IteratorResult<RunBusEvent<Run>>) => void; reject: (error: Error) => void } | null;
  /** While listened to: where each event goes (the queue is then empty). */
  listener: ((event: RunBusEvent<Run>) => void) | null;
  /** Told the end once, when listened to after it (ListenableSubscription). */
  ended: ((failure: Error | null) => void) | null;
  failure: Error | null;
  closed: boolean;
}

export function createRunEventBus<Run = unknown>(options: RunEventBusOptions = {}): LocalRunEventBus<Run> {
  const buffer = options.subscriberBuffer ?? SUBSCRIBER_BUFFER;
  const topics = new Map<string, Set<Channel<Run>>>();
  /** The list-level topic (`subscribeAll`), keyed like a run topic. */
  const ALL = Symbol('all runs');
  const everyRun = new Set<Channel<Run>>();
  let subscribers = 0;

  const close = (topic: string | typeof ALL, channel: Channel<Run>) => {
    if (channel.closed) return;
    channel.closed = true;
    subscribers -= 1;
    if (topic === ALL) {
      everyRun.delete(channel);
    } else {
      const set = topics.get(topic);
      set?.delete(channel);
      if (set?.size === 0) topics.delete(topic);
    }
    const waiter = channel.waiter;
    channel.waiter = null;
    if (waiter && channel.failure) waiter.reject(channel.failure);
    else waiter?.resolve({ value: undefined, done: true });
    if (channel.listener) endListened(channel);
  };

  /** Tells a listened channel's end, once it has ended and handed over what it had queued. */
  const endListened = (channel: Channel<Run>) => {
    const ended = channel.ended;
    if (!ended || !channel.closed || channel.queue.length > 0) return;
    channel.ended = null;
    channel.listener = null;
    ended(channel.failure);
  };

  const deliver = (topic: string | typeof ALL, channel: Channel<Run>, event: RunBusEvent<Run>) => {
    if (channel.types && !channel.types.has(event.type)) return;
    if (channel.listener) {
      channel.listener(event);
    } else if (channel.waiter) {
      const { resolve } = channel.waiter;
      channel.waiter = null;
      resolve({ value: event, done: false });
    } else if (channel.queue.length >= buffer) {
      const of = topic === ALL ? 'the runs list' : `run ${event.runId}`;
      channel.failure = new SubscriberOverflowError(
        `A subscriber of ${of} fell ${buffer} events behind and was cut off; subscribe again (runEvents replays from storage, the list feeds start with a fresh snapshot).`,
      );
      close(topic, channel);
    } else {
      channel.queue.push(event);
    }
  };

  const open = (topic: string | typeof ALL, types: ReadonlySet<string> | null): ListenableSubscription<RunBusEvent<Run>> => {
    const channel: Channel<Run> = { types, queue: [], waiter: null, listener: null, ended: null, failure: null, closed: false };
    if (topic === ALL) {
      everyRun.add(channel);
    } else {
      let set = topics.get(topic);
      if (!set) topics.set(topic, (set = new Set()));
      set.add(channel);
    }
    subscribers += 1;
    const runId = topic;
    const iterator: ListenableSubscription<RunBusEvent<Run>> = {
      next() {
        const queued = channel.queue.shift();
        if (queued) return Promise.resolve({ value: queued, done: false });
        if (channel.failure) return Promise.reject(channel.failure);
        if (channel.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => (channel.waiter = { resolve, reject }));
      },
      return() {
        channel.queue.length = 0;
        close(runId, channel);
        return Promise.resolve({ value: undefined, done: true });
      },
      listen(listener, ended) {
        channel.listener = listener;
        channel.ended = ended;
        // The listener may pause while it takes these (its consumer is busy): the rest stay queued.
        while (channel.listener === listener && channel.queue.length > 0) listener(channel.queue.shift()!);
        if (channel.listener === listener) endListened(channel);
      },
      pause() {
        channel.listener = null;
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  };

  const deliverToAll = (event: RunBusEvent<Run>) => {
    for (const channel of topics.get(event.runId) ?? []) deliver(event.runId, channel, event);
    for (const channel of everyRun) deliver(ALL, channel, event);
  };

  return {
    publish(draft) {
      const event = { ...draft, publishedAt: Date.now() } as RunBusEvent<Run>;
      deliverToAll(event);
      return event;
    },
    deliver: deliverToAll,
    watchedRuns: () => [...topics.keys()],
    subscribe: (runId) => open(runId, null),
    subscribeAll: (options) => open(ALL, options?.types ? new Set(options.types) : null),
    subscriberCount: () => subscribers,
    deepestQueue() {
      let deepest = 0;
      for (const channel of everyRun) deepest = Math.max(deepest, channel.queue.length);
      for (const set of topics.values()) for (const channel of set) deepest = Math.max(deepest, channel.queue.length);
      return deepest;
    },
    hasSubscribers: (runId) => everyRun.size > 0 || topics.has(runId),
    interrupt(affected, error) {
      const fail = (topic: string | typeof ALL, channel: Channel<Run>) => {
        channel.failure = error;
        close(topic, channel);
      };
      if (affected(null)) for (const channel of [...everyRun]) fail(ALL, channel);
      for (const [runId, set] of [...topics]) if (affected(runId)) for (const channel of [...set]) fail(runId, channel);
    },
  };
}

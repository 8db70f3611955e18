import { SUBSCRIBER_BUFFER, SubscriberOverflowError, type RunBusEvent, type RunBusEventDraft, type RunEventBus } from './events.ts';

/**
 * The in-process run event bus (runtime/events.ts names its events and its interface): every
 * process has one; the Redis bus (src/cluster/bus.ts) delivers through it.
 */

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
 * no promise per event and per subscriber (a run watched ten thousand times: services/queued-stream.ts
 * pushes, graphql/plugins/pushed-delivery.ts writes). While paused, events queue as for a reader,
 * with the same bound.
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

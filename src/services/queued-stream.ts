import { isListenable } from '../runtime/local-bus.ts';

/** Where a stream's events are put, in order; `end` ends the stream after what was put. */
export interface Outlet<Event> {
  push(event: Event): void;
  end(): void;
}

/**
 * What takes a stream's events when it is pushed rather than read (`PUSH`): `event` for each, in
 * order; `end` once, after the last (null: the stream reached its end; else why it failed).
 * `busy()` true: it holds events it has not delivered yet, and the stream takes no more from its
 * source (whose own bound then applies) until `resume()` is called.
 */
export interface PushConsumer<Event> {
  event(event: Event): void;
  end(failure: unknown): void;
  busy(): boolean;
}

/**
 * A queued stream's other way out: `stream[PUSH](consumer)` instead of reading it. It returns the
 * stream's `resume`. Call it before the first `next()`; `return()` still ends the stream.
 */
export const PUSH = Symbol('push the stream');
export type Pushable<Event> = AsyncGenerator<Event> & { [PUSH](consumer: PushConsumer<Event>): () => void };

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A stream: first what `first` puts out (a replay; called at the first `next()`), then, with
 * `live`, each source event as its handler turns it into stream events, until the stream is ended
 * or the source ends. `release` runs exactly once, as soon as the stream ends: `endedEarly` is false
 * only when the stream reached its end by itself, true when the client completed or disconnected
 * (or the stream failed). `return()` releases at once, also while a `next()` waits for the next
 * source event (releasing must end that wait: unsubscribing from the bus does).
 *
 * The run streams (run-stream.ts) are built on it: one hand-written iterator per watcher rather
 * than a chain of async generators (the handler, the replay's `yield*`, a release wrapper), each of
 * which cost promise hops and a suspended frame per watcher; at ten thousand watchers of one run
 * that chain was most of the server's own work per delivery (bench `subscribers`). A live step now
 * costs the bus's promise and one callback. Nor graphql-yoga's Repeater: measured at 1 000
 * watchers, its push and pull promises raised the server's CPU for the same deliveries by a third
 * or more.
 */
export function queuedStream<Event, Source>(
  first: ((out: Outlet<Event>) => Promise<void> | void) | null,
  live: { readonly events: AsyncIterator<Source>; readonly handle: (event: Source, out: Outlet<Event>) => Promise<void> | void } | null,
  release: (endedEarly: boolean) => unknown,
): Pushable<Event> {
  let queue: Event[] = [];
  let head = 0;
  let started = false;
  let ended = false;
  let released = false;
  const out: Outlet<Event> = {
    push: (event) => void (ended || queue.push(event)),
    end: () => void (ended = true),
  };
  const releaseOnce = async (endedEarly: boolean) => {
    if (released) return;
    released = true;
    await release(endedEarly);
  };
  const stop = () => {
    ended = true;
    queue = [];
    head = 0;
  };
  const fail = async (error: unknown): Promise<never> => {
    stop();
    await releaseOnce(true);
    throw error;
  };

  const next = (): Promise<IteratorResult<Event>> => {
    if (head < queue.length) {
      const value = queue[head++]!;
      if (head === queue.length) (queue = []), (head = 0);
      return Promise.resolve({ value, done: false });
    }
    if (!started) {
      started = true;
      const filling = first?.(out);
      return filling ? filling.then(next, fail) : next();
    }
    if (ended || !live) return releaseOnce(false).then(() => DONE);
    return live.events.next().then((result) => {
      if (result.done) {
        ended = true;
        return next();
      }
      let handling: Promise<void> | void;
      try {
        handling = live.handle(result.value, out);
      } catch (error) {
        return fail(error);
      }
      return handling ? handling.then(next, fail) : next();
    }, fail);
  };

  /**
   * Pushed: the replay's events, then each source event's, go to the consumer as they are made.
   * A source that can be listened to (the bus) is, with no promise per event; while a handler reads
   * storage, or while the consumer is busy, it is paused, and its own bounded queue holds what comes.
   */
  const pushTo = (consumer: PushConsumer<Event>): (() => void) => {
    started = true;
    out.push = (event) => void (ended || consumer.event(event));
    let handling = false;
    const finish = (failure: unknown) => {
      if (released) return;
      stop();
      void Promise.resolve(releaseOnce(failure !== null)).then(() => consumer.end(failure));
    };
    const fromSource = (event: Source) => {
      let handled: Promise<void> | void;
      try {
        handled = live!.handle(event, out);
      } catch (error) {
        return finish(error);
      }
      if (ended) return finish(null);
      if (handled) whileHandling(handled);
      else if (consumer.busy()) listening?.pause();
    };
    /** The source waits while the replay or a handler reads storage; then the stream ends or goes on. */
    const whileHandling = (handled: Promise<void>) => {
      handling = true;
      listening?.pause();
      handled.then(() => {
        handling = false;
        if (ended) finish(null);
        else resume();
      }, finish);
    };
    const sourceEnded = (failure: Error | null) => finish(failure);
    const listening = live && isListenable(live.events) ? live.events : null;
    let reading = false;
    const resume = () => {
      if (ended || handling || consumer.busy()) return;
      if (listening) return listening.listen(fromSource, sourceEnded);
      if (!live) return finish(null);
      if (reading) return;
      // A source that cannot be listened to is read, one event at a time.
      reading = true;
      live.events.next().then((result) => {
        reading = false;
        if (result.done) return finish(null);
        fromSource(result.value);
        resume();
      }, finish);
    };
    const filling = first?.(out);
    if (filling) whileHandling(filling);
    else if (ended) finish(null);
    else resume();
    return resume;
  };

  const stream: Pushable<Event> = {
    next,
    return: async (value) => {
      stop();
      await releaseOnce(true);
      return { done: true, value };
    },
    throw: async (error) => fail(error),
    [Symbol.asyncIterator]: () => stream,
    [PUSH]: pushTo,
  };
  return stream;
}

/**
 * Any async iterable as a pushable stream (its events as they are, read one at a time): how a
 * subscription whose source is not a queued stream (the list feeds) is pushed to its socket.
 */
export function pushableOf<Event>(source: AsyncIterable<Event>): Pushable<Event> {
  if (PUSH in source) return source as Pushable<Event>;
  const events = source[Symbol.asyncIterator]();
  return queuedStream<Event, Event>(null, { events, handle: (event, out) => out.push(event) }, () => events.return?.());
}

/** Where a stream's events are put, in order; `end` ends the stream after what was put. */
export interface Outlet<Event> {
  push(event: Event): void;
  end(): void;
}

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
): AsyncGenerator<Event> {
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

  const stream: AsyncGenerator<Event> = {
    next,
    return: async (value) => {
      stop();
      await releaseOnce(true);
      return { done: true, value };
    },
    throw: async (error) => fail(error),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}


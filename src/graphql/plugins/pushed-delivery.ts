import type { ExecutionResult } from 'graphql';
import { PUSH, type Pushable, type PushConsumer } from '../../services/queued-stream.ts';
import type { FrameSink } from '../ws-transport.ts';
import { closeDeliveredEvent } from './response-size.ts';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * The subscribers waiting for one shared execution, told in one loop when it settles: one
 * reaction on the execution for all of them, not one each (ten thousand microtasks per event).
 */
interface Waiter {
  settled(result: ExecutionResult): void;
  failed(error: unknown): void;
}
const waitingFor = new WeakMap<Promise<ExecutionResult>, Waiter[]>();
function whenSettled(execution: Promise<ExecutionResult>, subscriber: Waiter): void {
  let subscribers = waitingFor.get(execution);
  if (!subscribers) {
    const waiting: Waiter[] = [];
    subscribers = waiting;
    waitingFor.set(execution, waiting);
    execution.then(
      (result) => {
        waitingFor.delete(execution);
        for (const one of waiting) {
          // One subscriber's failure (its socket's) is its own, not the next one's.
          try {
            one.settled(result);
          } catch (error) {
            one.failed(error);
          }
        }
      },
      (error: unknown) => {
        waitingFor.delete(execution);
        for (const one of waiting) one.failed(error);
      },
    );
  }
  subscribers.push(subscriber);
}

/**
 * One websocket subscriber of a pushed stream (services/queued-stream.ts: the run streams), for
 * shared-execution.ts. Instead of a loop that awaits the next event, then its execution, then its
 * socket, per subscriber and per event (the promises of which were most of the server's own work
 * at ten thousand watchers of one run: bench `subscribers`), the stream hands each event over as it
 * comes, and the subscriber writes it as soon as its shared execution has settled (told with the
 * execution's other subscribers in one loop: `whenSettled`) and its socket took the frame before
 * (one write callback).
 *
 * What stays as it was: order (one event at a time per subscriber, each written after the one
 * before was taken by its socket); the bound (while a frame waits for its socket, the stream takes
 * nothing more from the bus, whose per-subscriber queue is bounded: past it, SUBSCRIBER_OVERFLOW
 * after the events queued before it); results with errors (a refusal, a resolver's failure) go to
 * graphql-ws, which reads this iterator, through masking and the result hooks, before the next
 * event is written; a failure of the stream or an execution ends the iterator with it.
 */
export function pushedDelivery(
  source: Pushable<unknown>,
  sink: FrameSink,
  context: object,
  executionOf: (event: unknown) => ExecutionResult | Promise<ExecutionResult>,
): AsyncGenerator<ExecutionResult> {
  /** Events handed over and not written yet, oldest first. */
  let waiting: unknown[] = [];
  /** The oldest event's execution is running, or its frame waits for the socket to take it. */
  let inFlight = false;
  /** The oldest event's execution, once it settled while this subscriber waited for it. */
  let executed: ExecutionResult | null = null;
  /** A result with errors, for graphql-ws to take (nothing after it is written until it has). */
  let handOff: ExecutionResult | null = null;
  /** The stream ended (null: by itself), once what was handed over before is written. */
  let ending: { readonly failure: unknown } | null = null;
  let done = false;
  /** graphql-ws's pending read. */
  let reader: { resolve(result: IteratorResult<ExecutionResult>): void; reject(error: unknown): void } | null = null;
  let resume: (() => void) | null = null;

  const answerReader = () => {
    if (!reader) return;
    const { resolve, reject } = reader;
    if (handOff) {
      const value = handOff;
      handOff = null;
      reader = null;
      resolve({ value, done: false });
    } else if (ending && waiting.length === 0 && !inFlight) {
      done = true;
      reader = null;
      if (ending.failure === null) resolve(DONE);
      else reject(ending.failure);
    }
  };
  const failed = (error: unknown) => {
    ending = { failure: error };
    waiting = [];
    executed = null;
    inFlight = false;
    void source.return(undefined);
    answerReader();
  };
  const written = (error?: Error | null) => {
    if (error) return failed(error);
    inFlight = false;
    drain();
  };
  const settled = (result: ExecutionResult) => {
    executed = result;
    inFlight = false;
    drain();
  };
  const waiter: Waiter = { settled, failed };
  const drain = (): void => {
    while (!inFlight && !handOff && !done) {
      if (waiting.length === 0) {
        if (ending) return answerReader();
        return resume?.();
      }
      const execution = executed ?? executionOf(waiting[0]);
      if (execution instanceof Promise) {
        inFlight = true;
        return whenSettled(execution, waiter);
      }
      executed = null;
      waiting.shift();
      if (execution.errors) {
        handOff = execution;
        return answerReader();
      }
      closeDeliveredEvent(context);
      if (!sink.open) continue;
      inFlight = true;
      return sink.write(execution, written);
    }
  };
  const consumer: PushConsumer<unknown> = {
    event(event) {
      if (done || ending) return;
      waiting.push(event);
      drain();
    },
    end(failure) {
      ending ??= { failure };
      drain();
      answerReader();
    },
    busy: () => inFlight || handOff !== null || waiting.length > 0,
  };

  const iterator: AsyncGenerator<ExecutionResult> = {
    next() {
      if (handOff) {
        const value = handOff;
        handOff = null;
        return Promise.resolve({ value, done: false });
      }
      if (done) return Promise.resolve(DONE);
      const read = new Promise<IteratorResult<ExecutionResult>>((resolve, reject) => (reader = { resolve, reject }));
      // The first read starts the stream (its replay, then live); a later one lets the events after
      // a handed-over result go on.
      if (!resume) resume = source[PUSH](consumer);
      else drain();
      answerReader();
      return read;
    },
    async return() {
      done = true;
      waiting = [];
      executed = null;
      handOff = null;
      await source.return(undefined);
      reader?.resolve(DONE);
      reader = null;
      return DONE;
    },
    async throw(error) {
      await iterator.return(undefined);
      throw error;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

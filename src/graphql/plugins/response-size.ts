import { useOnResolve } from '@envelop/on-resolve';
import { getNamedType, GraphQLError, isLeafType, type ExecutionResult, type GraphQLResolveInfo } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { feedSizeOf } from './query-cost.ts';

/**
 * The bytes one response is allowed, counted while it is resolved rather than after it was
 * serialised: once the budget is spent, execution is aborted and the client gets one error instead
 * of the data. So a request that would have produced 300 MB never builds that string.
 *
 * The count is the JSON size of every leaf value plus every response key (approximate for the
 * punctuation, exact for the values that make a response large: strings and JSON).
 *
 * A subscription has a budget per event: an event over it is replaced by the error and the stream
 * goes on. A feed's snapshot (the rows a list feed sends at once when it starts: `feedExtensions`
 * in query-cost.ts) is one response, as the equivalent `runs(first: 100)` query would be: its
 * events share one budget, and the event that would take it over the limit is replaced by the
 * error and ends the subscription (subscribe again with a smaller selection or a narrower filter).
 * What was sent before it stays sent, so a subscriber never receives more than the limit.
 */
interface Budget {
  readonly maxBytes: number;
  bytes: number;
  exceeded: boolean;
  /** Aborts the rest of the execution (a query or mutation; a subscription's current event, when its executor armed it). */
  abort: (() => void) | null;
  /** The event being resolved belongs to its feed's snapshot. */
  inSnapshot: boolean;
  /** The bytes of the snapshot events sent so far. */
  snapshotBytes: number;
}

/** Strings without a character JSON escapes: their size is their UTF-8 length plus the quotes. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The size of `value` as JSON, in bytes, without building the string for plain text. */
export function jsonBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return NEEDS_ESCAPE.test(value) ? Buffer.byteLength(JSON.stringify(value)) : Buffer.byteLength(value) + 2;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value).length;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 4 : Buffer.byteLength(text);
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function responseKeyOf(info: GraphQLResolveInfo): string {
  return info.fieldNodes[0]?.alias?.value ?? info.fieldName;
}

export function responseTooLarge(maxBytes: number): GraphQLError {
  return new GraphQLError(`The response exceeds ${maxBytes} bytes: ask for fewer items (first/last) or fewer fields.`, {
    extensions: { code: 'RESPONSE_TOO_LARGE' },
  });
}

/** The budget of the operation a context belongs to (one context per operation). */
const budgets = new WeakMap<object, Budget>();

/**
 * The refusal an event resolved with this context must be replaced by, or null when it fits. For an
 * execution shared by several subscribers (shared-execution.ts), which is charged to the context it
 * ran with only: it checks before the others receive the result.
 */
export function oversizeRefusalFor(context: object): ExecutionResult | null {
  const budget = budgets.get(context);
  return budget?.exceeded ? { errors: [responseTooLarge(budget.maxBytes)] } : null;
}

/**
 * A signal that aborts the execution of the subscription event about to be resolved with this
 * context as soon as it goes over its budget, for an executor that runs events itself
 * (shared-execution.ts): an oversized event then stops being built instead of being built and
 * dropped. Undefined outside a subscription with a budget.
 */
export function eventAbortSignalFor(context: object): AbortSignal | undefined {
  const budget = budgets.get(context);
  if (!budget) return undefined;
  const controller = new AbortController();
  budget.abort = () => controller.abort(responseTooLarge(budget.maxBytes));
  return controller.signal;
}

/** Ends the event the budget counted (a snapshot's bytes add up); returns what it came to. */
function closeEvent(budget: Budget): { exceeded: boolean; inSnapshot: boolean } {
  const { exceeded, inSnapshot } = budget;
  if (inSnapshot) budget.snapshotBytes += budget.bytes;
  budget.bytes = 0;
  budget.exceeded = false;
  budget.inSnapshot = false;
  budget.abort = null;
  return { exceeded, inSnapshot };
}

/**
 * For an event delivered past the subscription's result hooks (a result without errors written
 * straight to its socket: shared-execution.ts): ends its count as `boundedEvents` would. Only a
 * result within its budget may be delivered so: one over it is the refusal, which has errors.
 */
export function closeDeliveredEvent(context: object): void {
  const budget = budgets.get(context);
  if (budget) closeEvent(budget);
}

/**
 * The events of a subscription, each checked against its budget once it is resolved (each is
 * resolved, then passes here, before the next one is): an oversized event becomes the error; a
 * snapshot that would go over its budget ends the stream after the error.
 */
function boundedEvents(source: AsyncIterable<ExecutionResult>, budget: Budget): AsyncGenerator<ExecutionResult> {
  const events = source[Symbol.asyncIterator]();
  let ended = false;
  const end = async () => {
    ended = true;
    await events.return?.();
  };
  const bounded: AsyncGenerator<ExecutionResult> = {
    async next() {
      if (ended) return { done: true, value: undefined };
      const event = await events.next();
      const { exceeded, inSnapshot } = closeEvent(budget);
      if (event.done || !exceeded) return event;
      if (inSnapshot) await end();
      return { done: false, value: { errors: [responseTooLarge(budget.maxBytes)] } };
    },
    async return() {
      await end();
      return { done: true, value: undefined };
    },
    async throw(error) {
      await end();
      throw error;
    },
    [Symbol.asyncIterator]: () => bounded,
  };
  return bounded;
}

export function useResponseSizeLimit(maxBytes: number): Plugin {
  const count = (budget: Budget, info: GraphQLResolveInfo, result: unknown) => {
    // The root field of a feed's event says whether the event belongs to its snapshot.
    if (info.path.prev === undefined && info.parentType === info.schema.getSubscriptionType()) {
      budget.inSnapshot = feedSizeOf(info.parentType.getFields()[info.fieldName] ?? {})?.inSnapshot(result) === true;
    }
    // `"key":` and a separator, then the value: a leaf as JSON, an object's braces, a list's brackets and commas.
    let bytes = responseKeyOf(info).length + 4;
    if (isLeafType(getNamedType(info.returnType))) bytes += jsonBytes(result);
    else bytes += Array.isArray(result) ? 2 + result.length * 3 : 2;
    budget.bytes += bytes;
    const limit = budget.inSnapshot ? budget.maxBytes - budget.snapshotBytes : budget.maxBytes;
    if (budget.bytes > limit && !budget.exceeded) {
      budget.exceeded = true;
      budget.abort?.();
    }
  };

  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        useOnResolve(({ context, info }) => {
          const budget = budgets.get(context);
          if (!budget) return;
          return ({ result }) => {
            if (!(result instanceof Error)) count(budget, info, result);
          };
        }),
      );
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const controller = new AbortController();
      const budget: Budget = { maxBytes, bytes: 0, exceeded: false, abort: () => controller.abort(responseTooLarge(maxBytes)), inSnapshot: false, snapshotBytes: 0 };
      budgets.set(args.contextValue as object, budget);
      // The executor stops at the abort and rejects with its reason: the refusal, on every transport.
      const refuseIfTooLarge = (error: unknown) => {
        if (budget.exceeded) return { errors: [responseTooLarge(maxBytes)] };
        throw error;
      };
      setExecuteFn((executionArgs) => {
        const signal = (executionArgs as { signal?: AbortSignal }).signal;
        try {
          const result = executeFn({ ...executionArgs, signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal } as typeof executionArgs);
          return isPromiseLike(result) ? result.then(undefined, refuseIfTooLarge) : result;
        } catch (error) {
          return refuseIfTooLarge(error);
        }
      });
      return {
        onExecuteDone({ result, setResult }) {
          budgets.delete(args.contextValue as object);
          if (budget.exceeded && !isAsyncIterable(result)) setResult({ errors: [responseTooLarge(maxBytes)] });
        },
      };
    },
    onSubscribe({ args }) {
      const budget: Budget = { maxBytes, bytes: 0, exceeded: false, abort: null, inSnapshot: false, snapshotBytes: 0 };
      budgets.set(args.contextValue as object, budget);
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            budgets.delete(args.contextValue as object);
            return;
          }
          setResult(boundedEvents(result, budget));
          return { onEnd: () => budgets.delete(args.contextValue as object) };
        },
      };
    },
  };
}

import { useOnResolve } from '@envelop/on-resolve';
import { getNamedType, GraphQLError, isLeafType, type ExecutionResult, type GraphQLResolveInfo } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * The bytes one response is allowed, counted while it is resolved rather than after it was
 * serialised: once the budget is spent, execution is aborted and the client gets one error instead
 * of the data. So a request that would have produced 300 MB never builds that string.
 *
 * The count is the JSON size of every leaf value plus every response key (approximate for the
 * punctuation, exact for the values that make a response large: strings and JSON). A subscription
 * has a budget per event: an event over it is replaced by the error and the stream goes on.
 */
interface Budget {
  readonly maxBytes: number;
  bytes: number;
  exceeded: boolean;
  /** Aborts the rest of the execution (queries and mutations; a subscription keeps streaming). */
  readonly abort: (() => void) | null;
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

export function useResponseSizeLimit(maxBytes: number): Plugin {
  const count = (budget: Budget, info: GraphQLResolveInfo, result: unknown) => {
    // `"key":` and a separator, then the value: a leaf as JSON, an object's braces, a list's brackets and commas.
    let bytes = responseKeyOf(info).length + 4;
    if (isLeafType(getNamedType(info.returnType))) bytes += jsonBytes(result);
    else bytes += Array.isArray(result) ? 2 + result.length * 3 : 2;
    budget.bytes += bytes;
    if (budget.bytes > budget.maxBytes && !budget.exceeded) {
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
      const budget: Budget = { maxBytes, bytes: 0, exceeded: false, abort: () => controller.abort(responseTooLarge(maxBytes)) };
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
      const budget: Budget = { maxBytes, bytes: 0, exceeded: false, abort: null };
      budgets.set(args.contextValue as object, budget);
      const settle = (setEvent: (event: ExecutionResult) => void) => {
        if (budget.exceeded) setEvent({ errors: [responseTooLarge(maxBytes)] });
        budget.bytes = 0;
        budget.exceeded = false;
      };
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            budgets.delete(args.contextValue as object);
            return;
          }
          // Each event is resolved, then passes here, before the next one is resolved.
          return {
            onNext: ({ setResult }) => settle(setResult),
            onEnd: () => budgets.delete(args.contextValue as object),
          };
        },
      };
    },
  };
}

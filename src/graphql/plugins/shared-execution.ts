import { execute } from '@graphql-tools/executor';
import { contextCacheSymbol } from '@pothos/core';
import { createSourceEventStream, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../../context.ts';
import type { FrameSink } from '../ws-transport.ts';
import { pushableOf } from '../../services/queued-stream.ts';
import { pushedDelivery } from './pushed-delivery.ts';
import { eventAbortSignalFor, oversizeRefusalFor } from './response-size.ts';

/**
 * A subscription's context lives as long as the subscription, but what Pothos caches per context
 * (data loaders, the auth scopes evaluated per parent object) belongs to one execution: kept, a
 * dashboard open for a day would read a renamed configuration from its loader's cache and keep
 * every run row it was ever shown as a key of the scope cache. Pothos keys those caches by the
 * context's `contextCacheSymbol` entry when there is one: each execution gets a new one, and the
 * one it used is let go when it ends.
 */
function freshCaches(context: object | undefined): void {
  if (context) (context as Record<symbol, object>)[contextCacheSymbol] = {};
}

/**
 * One GraphQL execution per subscription event and audience, shared by every subscriber of the same
 * operation (document, operation name, variables) and the same viewer (id and admin role: what the
 * resolvers may show depends on nothing else). A thousand dashboards on one run cost one execution
 * per event instead of a thousand. It applies to events that are one object for every subscriber
 * (the run streams hand out one stream event per bus event and view: `sharedStreamEvent`; the live
 * runs list one update per run state: services/run-feeds.ts); any other event is executed per
 * subscriber as before.
 *
 * The execution is remembered in a WeakMap keyed by the event object, so it lives as long as the
 * event. It runs without the first subscriber's abort signal (that subscriber leaving must not fail
 * the others), and the response-size budget it was charged to decides for everyone: an oversized
 * event stops being resolved and becomes the same RESPONSE_TOO_LARGE error for every subscriber.
 * A feed's snapshot events are new objects per subscriber (services/run-feeds.ts), so each is
 * charged to its own subscriber's snapshot budget.
 *
 * Over a websocket, a result without errors is written straight to the subscriber's socket
 * (`sinkOf`, ws-transport.ts: serialised once per result, framed with the subscription's id) instead
 * of climbing the per-event chain above this plugin (envelop's result hooks, graphql-ws's loop, its
 * serialisation): at ten thousand watchers of one run that chain was most of the server's work per
 * delivery (bench `subscribers`). Only what that chain would do to such a result is done here: its
 * response-size count is closed (`closeDeliveredEvent`); masking and the logging hooks act on errors
 * only, and results with errors still take that way. Every websocket subscription is pushed to its
 * socket (pushed-delivery.ts; a source that is not a run stream is read one event at a time:
 * `pushableOf`): in order, each frame written after the socket took the one before, so the
 * per-subscriber outbox bounds (the bus's, a feed's) and the order are what they were.
 */
export function useSharedSubscriptionExecution(sinkOf: (context: object) => FrameSink | undefined): Plugin {
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
  const executions = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();

  const audienceOf = (args: ExecutionArgs): string => {
    let documentId = documentIds.get(args.document);
    if (documentId === undefined) documentIds.set(args.document, (documentId = nextDocumentId++));
    const viewer = (args.contextValue as Context | undefined)?.viewer;
    return JSON.stringify([documentId, args.operationName ?? null, args.variableValues ?? null, viewer?.id ?? null, viewer?.isAdmin === true]);
  };

  const subscribe = async (args: ExecutionArgs) => {
    const source = await createSourceEventStream(
      args.schema,
      args.document,
      args.rootValue,
      args.contextValue,
      args.variableValues ?? undefined,
      args.operationName ?? undefined,
      args.subscribeFieldResolver ?? undefined,
    );
    freshCaches(args.contextValue as object | undefined);
    if (!isAsyncIterable(source)) return source as ExecutionResult;
    const audience = audienceOf(args);
    const { signal: _signal, ...unsignalled } = args as ExecutionArgs & { signal?: AbortSignal };
    const run = async (payload: unknown): Promise<ExecutionResult> => {
      const context = args.contextValue as object | undefined;
      // Its own signal: aborted when the event goes over its response-size budget, nothing else.
      const signal = context ? eventAbortSignalFor(context) : undefined;
      let result: ExecutionResult;
      try {
        freshCaches(context);
        result = (await execute({ ...unsignalled, rootValue: payload, ...(signal ? { signal } : {}) } as never)) as ExecutionResult;
      } catch (error) {
        // The executor rejects with the abort's reason: the refusal below.
        if (!(context && oversizeRefusalFor(context))) throw error;
        result = { data: null };
      } finally {
        freshCaches(context);
      }
      return (context && oversizeRefusalFor(context)) || result;
    };
    /** The execution of an event for this audience: its result itself once it has settled (no await for the others). */
    const shared = (payload: unknown): ExecutionResult | Promise<ExecutionResult> => {
      if (typeof payload !== 'object' || payload === null) return run(payload);
      let byAudience = executions.get(payload);
      if (!byAudience) executions.set(payload, (byAudience = new Map()));
      let result = byAudience.get(audience);
      if (!result) {
        const running = run(payload);
        byAudience.set(audience, (result = running));
        running.then((value) => byAudience.set(audience, value), () => undefined);
      }
      return result;
    };
    const context = args.contextValue as object | undefined;
    const sink = context ? sinkOf(context) : undefined;
    // Over a websocket: pushed to its socket (pushed-delivery.ts); a run stream without a loop of awaits per subscriber.
    if (sink) return pushedDelivery(pushableOf(source), sink, context!, shared);
    const events = source[Symbol.asyncIterator]();
    const mapped: AsyncGenerator<ExecutionResult> = {
      async next() {
        const event = await events.next();
        if (event.done) return { done: true, value: undefined };
        const execution = shared(event.value);
        return { done: false, value: execution instanceof Promise ? await execution : execution };
      },
      async return() {
        await events.return?.();
        return { done: true, value: undefined };
      },
      async throw(error) {
        await events.return?.();
        throw error;
      },
      [Symbol.asyncIterator]: () => mapped,
    };
    return mapped;
  };

  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribe as never);
    },
  };
}

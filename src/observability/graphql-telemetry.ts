import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { tracer } from '../runtime/telemetry.ts';
import type { Metrics } from './metrics.ts';

/**
 * An envelop plugin (so HTTP, SSE and graphql-ws operations all pass it): one SERVER span per
 * GraphQL operation (`graphql.query <name>` etc.), active while it executes, so a run started by
 * the operation is its child; and the open-subscriptions gauge by transport.
 *
 * A few lines on `@opentelemetry/api` rather than `@envelop/opentelemetry`, which pulls in a
 * second, older SDK (sdk-trace-base 1.x) and records variables and results as attributes — content
 * that the privacy rules keep off spans. The operation name is the client's text: it is cut to 100
 * characters; the document and variables are never recorded.
 */
export function useOperationTelemetry(metrics: Metrics | undefined): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const span = operationSpan(args.document, args.operationName);
      setExecuteFn((execArgs) => context.with(trace.setSpan(context.active(), span), () => executeFn(execArgs)));
      return {
        onExecuteDone: ({ result }) => {
          if (isAsyncIterable(result)) return { onEnd: () => span.end() };
          markErrors(span, result.errors);
          span.end();
          return undefined;
        },
      };
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const span = operationSpan(args.document, args.operationName);
      setSubscribeFn((subscribeArgs) => context.with(trace.setSpan(context.active(), span), () => subscribeFn(subscribeArgs)));
      const transport = typeof args.contextValue === 'object' && args.contextValue !== null && 'connectionParams' in args.contextValue ? 'ws' : 'sse';
      return {
        onSubscribeResult: ({ result }) => {
          if (!isAsyncIterable(result)) {
            markErrors(span, result.errors);
            span.end();
            return undefined;
          }
          const closed = metrics?.subscriptionOpened(transport);
          return {
            onEnd: () => {
              closed?.();
              span.end();
            },
          };
        },
      };
    },
  };
}

function operationSpan(document: DocumentNode, operationName: string | null | undefined): Span {
  const operation = getOperationAST(document, operationName ?? undefined);
  const type = operation?.operation ?? 'unknown';
  const name = (operation?.name?.value ?? operationName ?? '').slice(0, 100);
  return tracer().startSpan(name ? `graphql.${type} ${name}` : `graphql.${type}`, {
    kind: SpanKind.SERVER,
    attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
  });
}

/** Errors are counted, not described: a message may name the client's input. */
function markErrors(span: Span, errors: readonly unknown[] | undefined): void {
  if (!errors || errors.length === 0) return;
  span.setAttribute('graphql.errors.count', errors.length);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

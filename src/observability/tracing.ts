import type { TracingConfig } from '../config.ts';
import type { Logger } from '../logger.ts';

/** The installed OpenTelemetry SDK of this process. */
export interface Tracing {
  /** Exports every span ended so far (tests, and before a stop). */
  forceFlush(): Promise<void>;
  /** Flushes, stops exporting and uninstalls the global tracer provider. Idempotent. */
  shutdown(): Promise<void>;
}

/** Spans the batch processor queues before it drops (the exporter is down or slow). */
const MAX_QUEUED_SPANS = 4_096;

/**
 * Installs the OpenTelemetry SDK as the global tracer provider when tracing is configured; the
 * code everywhere else speaks only `@opentelemetry/api`, which is a no-op without it. The SDK is
 * imported here, on demand: without OTEL_* variables it is never loaded and spans cost nothing.
 *
 * Spans go through a batch processor (export off the request path) to the OTLP/HTTP JSON exporter,
 * or to stdout with OTEL_TRACES_EXPORTER=console. Export failures are logged by the SDK's diag
 * channel at most; they never fail a run.
 */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  const [{ trace, context, propagation }, node, base, { resourceFromAttributes }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const exporter =
    config.exporter === 'console'
      ? new base.ConsoleSpanExporter()
      : new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers } });
  const provider = new node.NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new base.BatchSpanProcessor(exporter, { maxQueueSize: MAX_QUEUED_SPANS })],
  });
  // The async-hooks context manager (active spans follow awaits) and the W3C trace-context propagator.
  provider.register();
  // The endpoint is not logged: a collector URL may carry a token.
  logger.info({ exporter: config.exporter, service: config.serviceName }, 'tracing to OpenTelemetry');
  let stopped: Promise<void> | null = null;
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: () =>
      (stopped ??= provider
        .shutdown()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not flush the last spans'))
        .finally(() => {
          trace.disable();
          context.disable();
          propagation.disable();
        })),
  };
}

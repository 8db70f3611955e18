/**
 * Workload 8 (tracing overhead): the same agent runs (K tool rounds, `runAgent` over graphql-ws, METADATA)
 * on two Airlock servers of one kind, one without OpenTelemetry (the SDK not even loaded) and one
 * exporting every span over OTLP/HTTP to a local receiver in this process. Repetitions are
 * interleaved (off, on, on, off, …) and figures are medians; the ratio on ÷ off is the overhead.
 * The receiver counts the spans it got, so a tracing run that exported nothing does not pass as cheap.
 */
import { createServer } from 'node:http';
import { measureAgentVariants } from '../lib/agent-variants.ts';
import { postgresAvailable, startAirlock, type AirlockUnderTest, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, ratio, renderTable } from '../lib/stats.ts';

export interface TracingOptions {
  readonly runs: number;
  readonly k: number;
  readonly concurrency: number;
  readonly repetitions: number;
  readonly warmUpRuns: number;
}

type Variant = 'off' | 'on';

interface Sample {
  readonly variant: Variant;
  readonly wallMsPerStep: number;
  readonly cpuMsPerStep: number | null;
  readonly spansPerRun: number;
}

export interface TracingResult {
  readonly kind: DbKind;
  readonly samples: readonly Sample[];
  readonly median: Record<Variant, { readonly wallMsPerStep: number; readonly cpuMsPerStep: number; readonly spansPerRun: number }>;
  readonly overhead: { readonly wall: number | null; readonly cpu: number | null };
  readonly table: string;
}

/** An OTLP/HTTP receiver: takes `POST /v1/traces` (JSON), counts spans, answers `{}`. */
async function startReceiver(): Promise<{ url: string; spans: () => number; stop: () => Promise<void> }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
        for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
      } catch {
        // not JSON (protobuf): counted as nothing, which the table shows
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function runTracing(options: TracingOptions): Promise<TracingResult> {
  const kind: DbKind = (await postgresAvailable()) ? 'postgres' : 'pglite';
  const step = (text: string) => progress(`[tracing] ${text}`);
  const stops: (() => Promise<void>)[] = [];
  try {
    step('starting the fake OpenAI server, an OTLP receiver and two Airlock servers (tracing off / on)');
    const fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: '0' }, /listening (\d+)/);
    stops.push(() => fake.stop());
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
    const receiver = await startReceiver();
    stops.push(() => receiver.stop());
    const servers: Record<Variant, AirlockUnderTest> = {
      off: await startAirlock(kind, { fakeBaseUrl, k: options.k }),
      // The SDK's batch processor exports every 5 s or 512 spans, as it would in production.
      on: await startAirlock(kind, { fakeBaseUrl, k: options.k, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'airlock-bench' } }),
    };
    stops.push(() => servers.off.stop(), () => servers.on.stop());
    const driver = await startDriver('bench/bin/agent-driver.ts');
    stops.push(() => driver.stop());
    const measured = await measureAgentVariants({
      variants: [
        { name: 'off', airlock: servers.off },
        { name: 'on', airlock: servers.on },
      ],
      driver,
      fakeBaseUrl,
      k: options.k,
      runs: options.runs,
      concurrency: options.concurrency,
      repetitions: options.repetitions,
      warmUpRuns: options.warmUpRuns,
      label: 'tracing',
      around: (variant) => {
        const spansBefore = receiver.spans();
        return async () => {
          // Spans leave in batches (every 5 s): wait for this repetition's before counting them.
          if (variant === 'on') await new Promise((resolve) => setTimeout(resolve, 5_500));
          return (receiver.spans() - spansBefore) / options.runs;
        };
      },
    });
    const samples: Sample[] = measured.map((sample) => ({
      variant: sample.variant,
      wallMsPerStep: sample.wallMs / sample.providerCalls,
      cpuMsPerStep: sample.serverCpuMs === null ? null : sample.serverCpuMs / sample.providerCalls,
      spansPerRun: sample.extra ?? 0,
    }));
    progressDone();
    return summarise(kind, options, samples);
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop();
  }
}

function summarise(kind: DbKind, options: TracingOptions, samples: readonly Sample[]): TracingResult {
  const of = (variant: Variant) => samples.filter((sample) => sample.variant === variant);
  const figures = (variant: Variant) => ({
    wallMsPerStep: median(of(variant).map((sample) => sample.wallMsPerStep)),
    cpuMsPerStep: median(of(variant).map((sample) => sample.cpuMsPerStep ?? Number.NaN)),
    spansPerRun: median(of(variant).map((sample) => sample.spansPerRun)),
  });
  const medians = { off: figures('off'), on: figures('on') };
  const overhead = { wall: ratio(medians.on.wallMsPerStep, medians.off.wallMsPerStep), cpu: ratio(medians.on.cpuMsPerStep, medians.off.cpuMsPerStep) };
  const row = (variant: Variant, title: string) => [
    title,
    fmt(medians[variant].wallMsPerStep),
    variant === 'off' ? '1.00×' : fmtRatio(overhead.wall),
    fmt(medians[variant].cpuMsPerStep),
    variant === 'off' ? '1.00×' : fmtRatio(overhead.cpu),
    fmt(medians[variant].spansPerRun, 1),
  ];
  const table = [
    `${options.runs} runs × ${options.k + 1} provider calls (K = ${options.k}) at c = ${options.concurrency}, runAgent over graphql-ws, METADATA, ` +
      `${options.repetitions} interleaved repetitions, medians; Airlock on ${kind === 'postgres' ? 'PostgreSQL' : 'PGlite'}; a step is one provider call`,
    renderTable(
      ['variant', 'wall ms/step', 'wall × off', 'server CPU ms/step', 'CPU × off', 'spans exported per run'],
      [row('off', 'tracing off (no OTEL_*: SDK not loaded)'), row('on', 'tracing on (OTLP/HTTP JSON to a local receiver)')],
    ),
  ].join('\n');
  return { kind, samples, median: medians, overhead, table };
}

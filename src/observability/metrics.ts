import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LoopObserver } from '../runtime/telemetry.ts';

/**
 * The Prometheus metrics of one app (a registry per app, never prom-client's global one: tests and
 * tools run several apps in one process). Label values are bounded: statuses, reasons, provider
 * kinds, registered tool names, gate reasons, configuration ids (admin-created), transports —
 * never a user id, a prompt or a name the model made up.
 */
export interface Metrics {
  readonly registry: Registry;
  /** The loop's observer for one run of this configuration. */
  observerFor(configurationId: string): LoopObserver;
  runStarted(configurationId: string): void;
  /** A run settled (not parked): `seconds` from its start, approval waits included. */
  runFinished(status: string, reason: string | null, seconds: number): void;
  /** A run parked to wait for a decision, or resumed after one. */
  approvalWait(event: 'waiting' | 'decided'): void;
  /** One group-commit statement of the run writer. */
  writerCommit(rows: number, seconds: number): void;
  /** A GraphQL subscription opened (returns the function that closes it). */
  subscriptionOpened(transport: 'ws' | 'sse'): () => void;
}

export interface MetricsSources {
  /** Runs waiting for approval in the whole deployment (read at scrape time). */
  approvalsWaiting(): Promise<number>;
  /** The event bus of this instance: its open subscriptions and its slowest reader's backlog. */
  readonly bus?: { subscriberCount(): number; deepestQueue(): number };
  /** The Redis transport's counters, when this instance uses Redis. */
  redisStats?(): { published: number; dropped: number; received: number; outages: number };
  /** Messages from Redis dropped at the trust boundary since start, by reason (a fixed list). */
  redisRejections?(): Readonly<Record<string, number>>;
}

const PREFIX = 'airlock_';
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const RUN_BUCKETS = [0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const registers = [registry];

  const runsStarted = new Counter({ name: `${PREFIX}runs_started_total`, help: 'Runs started, by configuration id.', labelNames: ['configuration'], registers });
  const runsFinished = new Counter({ name: `${PREFIX}runs_finished_total`, help: 'Runs settled, by status and termination reason.', labelNames: ['status', 'reason'], registers });
  const runDuration = new Histogram({ name: `${PREFIX}run_duration_seconds`, help: 'From start to settle (approval waits included), by status.', labelNames: ['status'], buckets: RUN_BUCKETS, registers });
  const providerLatency = new Histogram({ name: `${PREFIX}provider_call_duration_seconds`, help: 'Provider calls, by provider kind and outcome.', labelNames: ['provider', 'outcome'], buckets: LATENCY_BUCKETS, registers });
  const tokens = new Counter({ name: `${PREFIX}tokens_total`, help: 'Tokens of answered provider calls, by configuration id and direction (input, output).', labelNames: ['configuration', 'direction'], registers });
  const cost = new Counter({ name: `${PREFIX}cost_total`, help: 'Estimated cost of answered provider calls (the model prices), by configuration id.', labelNames: ['configuration'], registers });
  const toolOffers = new Counter({ name: `${PREFIX}tool_offers_total`, help: 'Times a tool was offered to the model (once per provider call that offered it).', labelNames: ['tool'], registers });
  const toolCalls = new Counter({ name: `${PREFIX}tool_calls_total`, help: 'Tool calls by registered tool (`(unregistered)` for a name the model made up) and decision.', labelNames: ['tool', 'decision'], registers });
  const toolLatency = new Histogram({ name: `${PREFIX}tool_call_duration_seconds`, help: 'Tool calls that ran, by registered tool.', labelNames: ['tool'], buckets: LATENCY_BUCKETS, registers });
  const budgetDenials = new Counter({ name: `${PREFIX}budget_denials_total`, help: 'Provider calls refused by a budget pre-flight, by scope, period and exceeded limit.', labelNames: ['scope', 'period', 'exceeded'], registers });
  const approvals = new Counter({ name: `${PREFIX}approval_events_total`, help: 'Runs parked for approval (waiting) and resumed after a decision (decided) on this instance.', labelNames: ['event'], registers });
  const subscriptions = new Gauge({ name: `${PREFIX}subscriptions_open`, help: 'Open GraphQL subscriptions, by transport (ws, sse).', labelNames: ['transport'], registers });
  const batchRows = new Histogram({ name: `${PREFIX}run_writer_batch_rows`, help: 'Rows per group-commit statement of the run writer.', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 500], registers });
  const commitLatency = new Histogram({ name: `${PREFIX}run_writer_commit_seconds`, help: 'Latency of one group-commit statement of the run writer.', buckets: LATENCY_BUCKETS, registers });
  new Gauge({
    name: `${PREFIX}approvals_waiting`,
    help: 'Runs waiting for approval in the deployment (read from the database at scrape time).',
    registers,
    async collect() {
      this.set(await sources.approvalsWaiting());
    },
  });
  const bus = sources.bus;
  if (bus) {
    new Gauge({
      name: `${PREFIX}event_bus_subscribers`,
      help: 'Open subscriptions to the run event bus in this process (each GraphQL subscription holds one or more).',
      registers,
      collect() {
        this.set(bus.subscriberCount());
      },
    });
    new Gauge({
      name: `${PREFIX}event_bus_backlog_max`,
      help: 'Events waiting unread in the fullest subscriber queue: how far the slowest reader lags (cut off at AIRLOCK_SUBSCRIBER_BUFFER).',
      registers,
      collect() {
        this.set(bus.deepestQueue());
      },
    });
  }
  const redisStats = sources.redisStats;
  if (redisStats) {
    new Gauge({
      name: `${PREFIX}event_bus_redis_messages`,
      help: 'Messages of the Redis event bus since start, by kind (published, dropped, received, outages).',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, value] of Object.entries(redisStats())) this.set({ kind }, value);
      },
    });
  }
  const redisRejections = sources.redisRejections;
  if (redisRejections) {
    new Counter({
      name: `${PREFIX}event_bus_rejected_messages_total`,
      help: 'Messages from Redis dropped since start, by reason (unsigned, bad_mac, stale, future, replayed; unconfirmed: a control message the database does not bear out).',
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset();
        for (const [reason, value] of Object.entries(redisRejections())) this.inc({ reason }, value);
      },
    });
  }

  return {
    registry,
    observerFor(configurationId) {
      return {
        toolsOffered(names) {
          for (const tool of names) toolOffers.inc({ tool });
        },
        providerCall({ provider, durationMs, outcome, usage }) {
          providerLatency.observe({ provider, outcome }, durationMs / 1_000);
          if (!usage) return;
          tokens.inc({ configuration: configurationId, direction: 'input' }, usage.promptTokens);
          tokens.inc({ configuration: configurationId, direction: 'output' }, usage.completionTokens);
          cost.inc({ configuration: configurationId }, usage.cost);
        },
        toolCall({ tool, decision, durationMs }) {
          const name = tool ?? '(unregistered)';
          toolCalls.inc({ tool: name, decision });
          if (decision === 'ok' || decision === 'error' || decision === 'failed' || decision === 'timedOut') toolLatency.observe({ tool: name }, durationMs / 1_000);
        },
        budgetDenied({ scope, period, exceeded }) {
          budgetDenials.inc({ scope, period, exceeded });
        },
      };
    },
    runStarted: (configurationId) => runsStarted.inc({ configuration: configurationId }),
    runFinished(status, reason, seconds) {
      runsFinished.inc({ status, reason: reason ?? 'NONE' });
      runDuration.observe({ status }, Math.max(0, seconds));
    },
    approvalWait: (event) => approvals.inc({ event }),
    writerCommit(rows, seconds) {
      batchRows.observe(rows);
      commitLatency.observe(seconds);
    },
    subscriptionOpened(transport) {
      subscriptions.inc({ transport });
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        subscriptions.dec({ transport });
      };
    },
  };
}

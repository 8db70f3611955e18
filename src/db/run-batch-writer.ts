import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Db, RunStepRow } from './database.ts';
import { batchStatement, type BatchRow } from './run-batch-statement.ts';
import { storableJson } from './storable-text.ts';

export interface StepWrite {
  readonly runId: string;
  readonly sequence: number;
  readonly kind: RunStepRow['kind'];
  readonly round: number;
  readonly durationMs: number | null;
  readonly payload: object;
  /** The writer's lease epoch (durable runs): a step of an epoch the run has moved on from is refused. */
  readonly epoch?: number | null;
  /** The sealed resume point this step reaches: stored on the run in the same statement as the step. */
  readonly checkpoint?: string;
}

export interface UsageWrite {
  readonly id: string;
  readonly userId: string | null;
  readonly configurationId: string;
  readonly runId: string;
  readonly modelId: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cost: number;
}

/**
 * Group commit for the rows every run writes many of (its steps and its usage records): writes
 * queued while a statement is in flight go out together in ONE multi-row statement (steps and
 * usage in one `WITH … INSERT`, so one round trip and one transaction). Each promise settles when
 * the statement carrying its row has committed or failed. A run's rows go out in the order they
 * were queued, one statement at a time; statements of different runs may be in flight together.
 */
export interface RunWriter {
  insertStep(step: StepWrite): Promise<void>;
  insertUsage(usage: UsageWrite): Promise<void>;
  /** Someone waits for the queued rows: send them after this turn of the event loop rather than at the end of the window. */
  expedite(): void;
  /** Rows queued or in flight (for tests and metrics). */
  readonly pending: number;
}

/**
 * Rows per statement: far below PostgreSQL's 65 535 bind parameters (8 per usage row). Under a
 * backlog, several statements of 200 rows commit sooner than fewer of 500: issue 19 measured the
 * persistence workload (64 runs at once, BENCH_ONLY=persistence, five interleaved runs per
 * setting) at 0.55–0.62 × the raw INSERT rate with 200 rows, 6 in flight and 32 beside, against
 * 0.45–0.58 × with 500, 4 and 64; 128 rows did worse (0.46–0.51 ×).
 */
export const MAX_ROWS_PER_STATEMENT = 200;

/**
 * How long the first row of an idle writer waits for company (group commit): a run's REQUEST step
 * then usually travels with the LLM step and the tool steps of the same round, and steps of other
 * runs join them. Publication of a step is delayed by at most this much.
 */
export const GROUP_COMMIT_WINDOW_MS = 5;

/**
 * Statements in flight at once: 6 of the pool's 10 connections, so that run starts, settlements
 * and reads always find one (8 measured the same as 6). They never share a run: a run's rows
 * commit in sequence order, so a reader never sees step n + 1 stored without step n.
 */
export const MAX_STATEMENTS_IN_FLIGHT = 6;

/**
 * A statement beside one already in flight must carry at least this many rows: a trickle is
 * cheaper gathered behind the statement in flight (fewer round trips, less CPU), a backlog is
 * faster spread over several connections.
 */
export const MIN_ROWS_BESIDE = 32;

/** A queued row and the promise of the caller who queued it. */
type Queued = BatchRow & { resolve(): void; reject(error: unknown): void };

/**
 * True when the server reported that the statement failed (so, in autocommit, nothing of it was
 * stored), rather than the connection failing, which may have lost the acknowledgement of a commit.
 * SQLSTATE classes 08 (connection) and 57 (operator intervention, e.g. a terminated backend) are
 * not proof of a rollback.
 */
function certainlyRolledBack(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57');
}

export function createRunWriter(
  db: Db,
  options: {
    maxRowsPerStatement?: number;
    windowMs?: number;
    maxStatementsInFlight?: number;
    minRowsBeside?: number;
    /** Learns each committed statement's row count and latency (metrics). */
    onCommit?: (rows: number, seconds: number) => void;
  } = {},
): RunWriter {
  const maxRows = options.maxRowsPerStatement ?? MAX_ROWS_PER_STATEMENT;
  const windowMs = options.windowMs ?? GROUP_COMMIT_WINDOW_MS;
  const maxStatements = options.maxStatementsInFlight ?? MAX_STATEMENTS_IN_FLIGHT;
  const minRowsBeside = options.minRowsBeside ?? MIN_ROWS_BESIDE;
  let queue: Queued[] = [];
  /** Runs with rows in a statement in flight: their next rows wait for it (commit order = sequence order). */
  const busyRuns = new Set<string>();
  let statements = 0;
  let pending = 0;
  let window: NodeJS.Timeout | null = null;
  let soon: NodeJS.Immediate | null = null;

  const write = (batch: readonly Queued[]) =>
    // Looked up per statement, never cached: a tracer provider may be installed after start.
    trace.getTracer('airlock').startActiveSpan('airlock.run_writer.commit', { attributes: { 'airlock.batch.rows': batch.length } }, async (span) => {
      const started = performance.now();
      try {
        await db.executeQuery(batchStatement(batch));
        options.onCommit?.(batch.length, (performance.now() - started) / 1_000);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'statement failed' });
        throw error;
      } finally {
        span.end();
      }
    });

  const send = async (batch: readonly Queued[]) => {
    try {
      await write(batch);
      for (const item of batch) item.resolve();
    } catch (error) {
      if (batch.length > 1 && certainlyRolledBack(error)) {
        // One bad row must not cost the other runs their rows: each is tried alone, in order.
        for (const item of batch) await write([item]).then(item.resolve, item.reject);
      } else {
        for (const item of batch) item.reject(error);
      }
    }
  };

  /** The queued rows of runs with nothing in flight, in queue order, at most `maxRows`. */
  const takeBatch = (): Queued[] => {
    const batch: Queued[] = [];
    const rest: Queued[] = [];
    for (const item of queue) {
      if (batch.length < maxRows && !busyRuns.has(item.row.run_id)) batch.push(item);
      else rest.push(item);
    }
    queue = rest;
    return batch;
  };

  /** Whether at least `minRowsBeside` rows of runs with nothing in flight wait. */
  const backlog = () => {
    let ready = 0;
    for (const item of queue) if (!busyRuns.has(item.row.run_id) && ++ready >= minRowsBeside) return true;
    return false;
  };

  /** Starts statements while slots are free and rows of idle runs wait. */
  const pump = () => {
    if (window) clearTimeout(window);
    if (soon) clearImmediate(soon);
    window = null;
    soon = null;
    while (statements < maxStatements && queue.length > 0) {
      if (statements > 0 && !backlog()) return;
      const batch = takeBatch();
      if (batch.length === 0) return;
      const runs = new Set(batch.map((item) => item.row.run_id));
      for (const runId of runs) busyRuns.add(runId);
      statements += 1;
      void send(batch).then(() => {
        statements -= 1;
        pending -= batch.length;
        for (const runId of runs) busyRuns.delete(runId);
        // Rows that arrived meanwhile go at once: they have waited for this statement already.
        pump();
      });
    }
  };

  const enqueue = (item: Omit<Queued, 'resolve' | 'reject'>) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ ...item, resolve, reject } as Queued);
      pending += 1;
      // Wait the window so that the rows this run and others are about to write go out together.
      window ??= setTimeout(pump, windowMs);
    });

  return {
    insertStep: (step) =>
      enqueue({
        table: 'run_steps',
        row: {
          run_id: step.runId,
          sequence: step.sequence,
          kind: step.kind,
          round: step.round,
          duration_ms: step.durationMs,
          payload: storableJson(step.payload),
          epoch: step.epoch ?? null,
          checkpoint: step.checkpoint ?? null,
        },
      }),
    insertUsage: (usage) =>
      enqueue({
        table: 'usage_records',
        row: {
          id: usage.id,
          user_id: usage.userId,
          configuration_id: usage.configurationId,
          run_id: usage.runId,
          model_id: usage.modelId,
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          cost: usage.cost,
        },
      }),
    // Not at once: what other runs queue in this turn of the event loop joins the statement.
    expedite: () => void (soon ??= setImmediate(pump)),
    get pending() {
      return pending;
    },
  };
}

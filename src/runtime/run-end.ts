import type { RunOutcome } from './run.ts';

/**
 * The writes that close a run, retried: its outcome, or when that cannot be stored, its end without
 * the outcome (run-recorder.ts calls it once per run, after every step).
 */

/**
 * Pauses between attempts of the writes that close a run (its outcome, its incomplete-audit flag):
 * about 3 s in all, so a database blip (a failover, terminated connections) does not leave a
 * finished run RUNNING until the stale-heartbeat sweep. Both writes are idempotent. Steps are not
 * retried: an insert whose acknowledgement was lost may have been stored.
 */
export const CLOSING_WRITE_RETRY_DELAYS_MS: readonly number[] = [50, 100, 200, 400, 800, 1_600];

/** Between attempts to store a run's end while the database is unreachable (until it is stored, or the server stops). */
export const SETTLE_RETRY_INTERVAL_MS = 5_000;

export const OUTCOME_NOT_STORED =
  'The run ended, but its outcome could not be stored: the final answer is lost and the totals are those of its usage records; see the server log.';

/** `write`, tried again after each of `delaysMs` while it rejects; the last rejection is thrown. */
export async function withRetries<T>(write: () => Promise<T>, delaysMs: readonly number[]): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= delaysMs.length) throw error;
      await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
    }
  }
}

export interface RunEndDeps<Run> {
  readonly runId: string;
  /** The two writes of RunRepository (run-recorder.ts) that close a run. */
  readonly repository: {
    settle(runId: string, outcome: RunOutcome, storedFinalContent: string | null, epoch?: number): Promise<Run | null>;
    settleWithoutOutcome(runId: string, outcome: RunOutcome, errorMessage: string, epoch?: number): Promise<Run | null>;
  };
  readonly logger: { error(obj: object, msg?: string): void };
  /** The lease epoch every write carries (durable runs). */
  readonly epoch: number | undefined;
  readonly retryDelaysMs: readonly number[];
  readonly settleRetryIntervalMs: number;
  readonly stopSignal: AbortSignal | undefined;
  /** True (and handled) when `error` says the run was taken over: nothing more is written. */
  lost(error: unknown): boolean;
}

/**
 * Stores the end of the run: the outcome as reported (with retries), or, when that fails, the
 * same status and reason without the final answer (totals from the usage records). While the
 * server runs this goes on until one of them is stored: the run stays in its process, whose
 * heartbeat keeps it from being taken for interrupted. Undefined only when the server stops first.
 */
export async function storeRunEnd<Run>(
  deps: RunEndDeps<Run>,
  outcome: RunOutcome,
  finalContent: string | null,
): Promise<{ readonly run: Run | null; readonly withoutOutcome: boolean } | undefined> {
  const { runId, repository, logger, epoch, retryDelaysMs, settleRetryIntervalMs, stopSignal, lost } = deps;
  for (let attempt = 1; ; attempt++) {
    try {
      const run = await withRetries(async () => {
        try {
          return await repository.settle(runId, outcome, finalContent, epoch);
        } catch (error) {
          if (lost(error)) return undefined;
          throw error;
        }
      }, retryDelaysMs);
      return run === undefined ? undefined : { run, withoutOutcome: false };
    } catch (error) {
      if (attempt === 1) logger.error({ err: error, runId }, 'could not store the run outcome; storing its end without it');
    }
    try {
      const run = await repository.settleWithoutOutcome(runId, outcome, OUTCOME_NOT_STORED, epoch);
      return { run, withoutOutcome: true };
    } catch (error) {
      if (lost(error)) return undefined;
      if (attempt === 1) logger.error({ err: error, runId }, `could not store the end of the run; retrying every ${settleRetryIntervalMs} ms until the server stops`);
    }
    if (stopSignal?.aborted) return undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, settleRetryIntervalMs);
      stopSignal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (stopSignal?.aborted) return undefined;
  }
}

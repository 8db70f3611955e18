import type { RunEventBus, RunProgress } from './events.ts';
import type { ResumePoint } from './resume-point.ts';
import type { RunOutcome, RunStep } from './run.ts';
import { filterRunContent, filterStep, type PrivacyLevel } from './privacy.ts';
import { toStoredStep, type StoredStep } from './stored-step.ts';
import { CLOSING_WRITE_RETRY_DELAYS_MS, SETTLE_RETRY_INTERVAL_MS, storeRunEnd, withRetries } from './run-end.ts';
import { addUsage, ZERO_USAGE } from './usage.ts';

/**
 * The run's lease moved on to another process (durable runs): this one was paused or cut off past
 * its lease and the run was taken over. Its writes are refused; it must stop without writing or
 * publishing anything more.
 */
export class LeaseLostError extends Error {
  constructor(runId: string) {
    super(`run ${runId} was taken over by another process`);
  }
}

/** What a durable run's step writes carry: the writer's epoch, and the sealed resume point the step reaches. */
export interface StepLease {
  readonly epoch: number;
  readonly checkpoint?: string;
}

/** The storage a recorder needs; `Run` is the stored run row, which the recorder only passes on. */
export interface RunRepository<Run = unknown> {
  /** Rejects with LeaseLostError when `lease` is given and the run has moved on from its epoch. */
  insertStep(runId: string, sequence: number, step: StoredStep, lease?: StepLease): Promise<void>;
  /**
   * The settled run; null when it was already settled (settling is exactly-once). With `epoch`,
   * rejects with LeaseLostError when the run is RUNNING under another epoch.
   */
  settle(runId: string, outcome: RunOutcome, storedFinalContent: string | null, epoch?: number): Promise<Run | null>;
  /**
   * When `settle` keeps failing: the same status and reason, no final answer, the totals of the
   * run's usage records, the audit flagged incomplete. Null when it was already settled.
   */
  settleWithoutOutcome(runId: string, outcome: RunOutcome, errorMessage: string, epoch?: number): Promise<Run | null>;
  markAuditIncomplete(runId: string): Promise<void>;
  /** Optional: someone waits for the queued step writes, so they should go out soon (not at the end of a batching window). */
  expedite?(): void;
}

export interface RecorderLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RunRecorder<Run = unknown> {
  /**
   * Queues the filtered copy of the step with the next sequence number for storage and returns at
   * once (write-behind): the step is published when its write has committed, in sequence order.
   * It waits only when MAX_UNWRITTEN_STEPS of this run are still unwritten (backpressure). A
   * durable run's `resumeFrom` is sealed at once and stored with the step.
   */
  recordStep(step: RunStep, resumeFrom?: ResumePoint): Promise<void>;
  /** True once a write found the run taken over by another process: nothing more is written or published. */
  readonly leaseLost: boolean;
  /**
   * Stores the step (after every step queued before it) and THROWS if that fails instead of
   * flagging: an approval decision that is not stored must stop the writes it would allow.
   */
  recordRequiredStep(step: RunStep, resumeFrom?: ResumePoint): Promise<void>;
  /** Resolves when every queued step is written (or flagged) and published. */
  flushed(): Promise<void>;
  /** Stores the outcome once, after every step; a second call is refused (returns false) and logged. */
  settle(outcome: RunOutcome): Promise<boolean>;
  /** Announces that the run is waiting (the caller stored the suspension after `flushed()` and passes the parked run). */
  announceSuspension(suspension: NonNullable<RunOutcome['suspension']>, parked: Run): void;
  /** True once any write failed: the stored trail of this run is incomplete. */
  readonly auditIncomplete: boolean;
}

/**
 * Steps of one run that may wait for storage while its loop goes on. Writes normally take well
 * under a provider call; the cap bounds memory when the database stalls.
 */
export const MAX_UNWRITTEN_STEPS = 16;

/**
 * Records one run: the privacy-filtered copy goes to storage in order, without holding the loop up,
 * and each step is published only after its write returned (so a subscriber never sees a step that
 * a reload would not show, unless the write failed, which is logged and flagged). Storage failures
 * never stop the run. Publication follows sequence order: a step waits for the steps before it.
 */
export function createRunRecorder<Run = unknown>(options: {
  readonly runId: string;
  readonly level: PrivacyLevel;
  readonly repository: RunRepository<Run>;
  readonly bus: RunEventBus<Run>;
  readonly logger: RecorderLogger;
  /** The last sequence already stored (a resumed run continues after it). */
  readonly afterSequence?: number;
  /** The run row's state version while these steps run (default 0, a new run's). */
  readonly stateVersion?: number;
  /** The totals before the first step recorded here (a resumed run's, as parked). */
  readonly progress?: RunProgress;
  /** Default CLOSING_WRITE_RETRY_DELAYS_MS. */
  readonly retryDelaysMs?: readonly number[];
  /** Default SETTLE_RETRY_INTERVAL_MS. */
  readonly settleRetryIntervalMs?: number;
  /**
   * Aborted when the server stops: a run whose end cannot be stored is then left RUNNING for the
   * stale-heartbeat sweep instead of being retried for ever.
   */
  readonly stopSignal?: AbortSignal;
  /**
   * Durable runs: the epoch this process holds the run's lease under (every write carries it), how
   * a resume point is sealed for storage, and who learns that the lease was lost.
   */
  readonly lease?: { readonly epoch: number; seal(point: ResumePoint): string; onLost(): void };
}): RunRecorder<Run> {
  const { runId, level, repository, bus, logger, stopSignal, lease } = options;
  let leaseLost = false;
  /** A write found the run taken over: stop everything here (once). */
  const lost = (error: unknown): boolean => {
    if (!(error instanceof LeaseLostError)) return false;
    if (!leaseLost) {
      leaseLost = true;
      logger.warn({ runId }, 'the run was taken over by another process; this one stops writing it');
      lease?.onLost();
    }
    return true;
  };
  const retryDelaysMs = options.retryDelaysMs ?? CLOSING_WRITE_RETRY_DELAYS_MS;
  const settleRetryIntervalMs = options.settleRetryIntervalMs ?? SETTLE_RETRY_INTERVAL_MS;
  let sequence = options.afterSequence ?? 0;
  let settled = false;
  let auditIncomplete = false;
  let flagged = false;
  /** The publication of the last queued step: steps publish one after another, in sequence. */
  let published: Promise<void> = Promise.resolve();
  let unwritten = 0;
  const stateVersion = options.stateVersion ?? 0;
  let progress: RunProgress = options.progress ?? { iterations: 0, usage: ZERO_USAGE };
  /** Totals carried by a step's event: LLM steps add one call and its usage. */
  const advance = (step: RunStep): RunProgress =>
    (progress = step.kind === 'LLM' ? { iterations: progress.iterations + 1, usage: addUsage(progress.usage, step.usage) } : progress);

  /** Stores the incomplete-audit flag once; a failed attempt is tried again when the run settles. */
  const storeFlag = async (delaysMs: readonly number[]) => {
    try {
      await withRetries(() => repository.markAuditIncomplete(runId), delaysMs);
      flagged = true;
    } catch (markError) {
      logger.error({ err: markError, runId }, 'could not flag the run as having an incomplete audit trail');
    }
  };

  /** Stores the end of the run (run-end.ts); storing it without its outcome flags the audit incomplete. */
  const storeEnd = async (outcome: RunOutcome, finalContent: string | null): Promise<Run | null | undefined> => {
    const end = await storeRunEnd({ runId, repository, logger, epoch: lease?.epoch, retryDelaysMs, settleRetryIntervalMs, stopSignal, lost }, outcome, finalContent);
    if (end?.withoutOutcome) {
      auditIncomplete = true;
      flagged = true;
    }
    return end?.run;
  };

  const flagIncomplete = async (error: unknown, what: string) => {
    logger.error({ err: error, runId }, `could not store ${what}; the run goes on with an incomplete audit trail`);
    if (auditIncomplete) return;
    auditIncomplete = true;
    // No waiting mid-run: settle() retries a flag that could not be stored now.
    await storeFlag([]);
  };

  /** What a step's write carries of the lease: the epoch, and the sealed resume point if it reaches one. */
  const stepLease = (resumeFrom: ResumePoint | undefined): StepLease | undefined =>
    lease && { epoch: lease.epoch, ...(resumeFrom ? { checkpoint: lease.seal(resumeFrom) } : {}) };

  return {
    get auditIncomplete() {
      return auditIncomplete;
    },
    get leaseLost() {
      return leaseLost;
    },
    recordStep(step, resumeFrom) {
      sequence += 1;
      const stepSequence = sequence;
      const full = toStoredStep(step);
      const filtered = filterStep(full, level);
      const stepProgress = advance(step);
      let written: Promise<{ error: unknown } | null>;
      try {
        written = repository.insertStep(runId, stepSequence, filtered, stepLease(resumeFrom)).then(
          () => null,
          (error: unknown) => ({ error }),
        );
      } catch (error) {
        written = Promise.resolve({ error }); // a write that cannot even be queued is flagged the same way
      }
      unwritten += 1;
      published = published.then(async () => {
        const failed = await written;
        unwritten -= 1;
        // A run taken over publishes nothing more: its successor publishes what it stores.
        if (leaseLost || (failed && lost(failed.error))) return;
        if (failed) await flagIncomplete(failed.error, `step ${stepSequence}`);
        bus.publish({ type: 'step', runId, sequence: stepSequence, stateVersion, progress: stepProgress, full, filtered });
      });
      if (unwritten < MAX_UNWRITTEN_STEPS) return Promise.resolve();
      repository.expedite?.();
      return published;
    },
    async recordRequiredStep(step, resumeFrom) {
      repository.expedite?.();
      await published;
      sequence += 1;
      const full = toStoredStep(step);
      const filtered = filterStep(full, level);
      const stepProgress = advance(step);
      const written = repository.insertStep(runId, sequence, filtered, stepLease(resumeFrom));
      repository.expedite?.();
      try {
        await written;
      } catch (error) {
        lost(error);
        throw error;
      }
      bus.publish({ type: 'step', runId, sequence, stateVersion, progress: stepProgress, full, filtered });
    },
    flushed: () => {
      repository.expedite?.();
      return published;
    },
    announceSuspension(suspension, parked) {
      bus.publish({ type: 'suspended', runId, previews: suspension.previews, calls: suspension.calls, digest: suspension.digest, run: parked });
    },
    async settle(outcome) {
      if (settled) {
        logger.warn({ runId }, 'refused to settle a run twice');
        return false;
      }
      settled = true;
      repository.expedite?.();
      await published;
      if (leaseLost) return false;
      const stored = filterRunContent(level, { prompt: null, finalContent: outcome.finalContent });
      let settledRun = await storeEnd(outcome, stored.finalContent);
      if (leaseLost) return false;
      if (settledRun === undefined) {
        // No finished event for a run that storage still holds RUNNING.
        logger.error({ runId }, 'the server stopped before the end of the run could be stored; the stale-heartbeat sweep will settle it');
        return false;
      }
      if (settledRun === null) logger.warn({ runId }, 'refused to settle a run that was already settled');
      const accepted = settledRun !== null;
      if (auditIncomplete && !flagged) {
        await storeFlag(retryDelaysMs);
        settledRun = null; // the flag changed the row after it was settled
      }
      bus.publish({ type: 'finished', runId, finalContent: outcome.finalContent, run: settledRun });
      return accepted;
    },
  };
}

import type { Db, RunRow } from '../../db/database.ts';
import * as leases from '../../db/repositories/run-leases.ts';
import { suspendRun } from '../../db/repositories/run-suspension.ts';
import type { SecretBox } from '../../db/secret-box.ts';
import type { Logger } from '../../logger.ts';
import type { RunTelemetry } from '../../observability/run-telemetry.ts';
import type { RunEventBus, RunProgress } from '../../runtime/events.ts';
import { LoopHandedOver } from '../../runtime/loop-session.ts';
import type { ResumePoint } from '../../runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../../runtime/run.ts';
import { createRunRecorder, type RunRecorder, type RunRepository } from '../../runtime/run-recorder.ts';
import { sealSuspendedRun } from '../approvals.ts';
import { sealCheckpoint } from '../run-checkpoints.ts';
import type { RunRequest, SuspendedRun } from '../run-execution.ts';
import type { DrivenRuns } from './driven-runs.ts';

export const FAILED_UNEXPECTEDLY = 'The run failed unexpectedly; see the server log.';

/** A run that failed on the server's side, keeping the iterations and usage of `base` (none by default). */
export function failure(errorMessage: string, base?: RunOutcome): RunOutcome {
  return {
    status: 'FAILED',
    terminationReason: 'PROVIDER_FAILED',
    truncated: false,
    iterations: base?.iterations ?? 0,
    finalContent: null,
    usage: base?.usage ?? { promptTokens: 0, completionTokens: 0, cost: 0 },
    errorMessage,
  };
}

/** A row as it travels on the bus: the sealed checkpoint stays in the database. */
export const withoutCheckpoint = (run: RunRow): RunRow => (run.checkpoint === null ? run : { ...run, checkpoint: null });

/** The part of a run request every way of driving a run shares. */
export type DrivenRequest = Pick<RunRequest, 'signal' | 'onStep' | 'observer' | 'spanContent' | 'checkpoint' | 'handover' | 'onPrepared'>;

/** One way of driving a run here: a start, a resume after a decision, a takeover. */
export interface Drive {
  readonly run: RunRow;
  /** The lease epoch this process drives the run under. */
  readonly epoch: number;
  readonly telemetry: RunTelemetry;
  readonly logger: Logger;
  /** The last step already stored, and the totals before the first step recorded here. */
  readonly afterSequence?: number;
  readonly progress?: RunProgress;
  /** The options and allow-list, when known before the loop (a resume); else learnt from it. */
  readonly context?: Omit<SuspendedRun, 'suspension'>;
  /** Runs before the loop with the recorder (an approval decision stored first); false = nothing more runs. */
  before?(recorder: RunRecorder<RunRow>): Promise<boolean>;
  loop(request: DrivenRequest): Promise<RunOutcome>;
}

/** What driving a run reads and writes besides its loop. */
export interface DriveDeps {
  readonly db: Db;
  readonly secrets: SecretBox;
  readonly bus: RunEventBus<RunRow>;
  /** Where the recorders store steps and settlements. */
  readonly repository: RunRepository<RunRow>;
  /** Where a drive is tracked from its start to its end. */
  readonly driven: DrivenRuns;
  /** AIRLOCK_RESUME_RUNS: checkpoints are stored, and a stop hands a run over instead of interrupting it. */
  readonly resumeRuns: boolean;
  /**
   * Aborted when the host stops: recorders then stop retrying to store a run's end (the sweep
   * settles it), and a run that stops now is handed over (or interrupted), not cancelled.
   */
  readonly stopSignal: AbortSignal;
}

/**
 * Drives a run here, in the background: its recorder (every write under the lease's epoch), its
 * loop (with a checkpoint at each boundary when runs are durable), then its end: parked, settled
 * or handed over. Tracked in `driven` until that end.
 */
export function driveRun(deps: DriveDeps, drive: Drive): void {
  const { db, secrets, bus, repository, resumeRuns, stopSignal } = deps;
  const { run, epoch, telemetry, logger: runLogger } = drive;
  const controller = new AbortController();
  const handover = new AbortController();
  let context: Omit<SuspendedRun, 'suspension'> | null = drive.context ?? null;
  const seal = (point: ResumePoint) => sealCheckpoint(secrets, run.id, { point, settings: context!.settings, allowList: context!.allowList });
  const recorder = createRunRecorder({
    runId: run.id,
    level: run.privacy_level,
    repository,
    bus,
    logger: runLogger,
    stopSignal,
    stateVersion: run.state_version,
    ...(drive.afterSequence === undefined ? {} : { afterSequence: drive.afterSequence }),
    ...(drive.progress ? { progress: drive.progress } : {}),
    lease: { epoch, seal, onLost: () => controller.abort() },
  });
  const body = async () => {
    if (drive.before && !(await drive.before(recorder))) return;
    let outcome: RunOutcome | 'handed over';
    try {
      outcome = await telemetry.within(() =>
        drive.loop({
          signal: controller.signal,
          handover: handover.signal,
          onStep: (step: RunStep, resumeFrom?: ResumePoint) => (telemetry.step(step), recorder.recordStep(step, resumeFrom)),
          ...(resumeRuns
            ? {
                checkpoint: async (point: ResumePoint) => {
                  await recorder.flushed();
                  if (!(await leases.storeCheckpoint(db, { runId: run.id, epoch }, seal(point)))) {
                    controller.abort();
                    throw new LoopHandedOver();
                  }
                },
              }
            : {}),
          onPrepared: (prepared) => (context ??= prepared),
          observer: telemetry.observer,
          spanContent: telemetry.spanContent,
        }),
      );
    } catch (error) {
      if (error instanceof LoopHandedOver) outcome = 'handed over';
      else {
        runLogger.error({ err: error }, 'run failed unexpectedly');
        outcome = failure(FAILED_UNEXPECTEDLY);
      }
    }
    await conclude(deps, drive, recorder, outcome, context);
  };
  const done = body()
    .catch((error: unknown) => runLogger.error({ err: error }, 'could not settle the run'))
    // A resumed run is tracked again under the same id: only forget the entry this body owns.
    .finally(() => deps.driven.forget(run.id, controller));
  deps.driven.track(run.id, { controller, handover, done, userId: run.user_id, epoch });
}

/** After the loop returns: park the run (sealed state), settle it, or hand it over; each publishes its event. */
async function conclude(
  deps: DriveDeps,
  { run, epoch, telemetry, logger: runLogger }: Drive,
  recorder: RunRecorder<RunRow>,
  outcome: RunOutcome | 'handed over',
  context: Omit<SuspendedRun, 'suspension'> | null,
): Promise<void> {
  const { db, secrets, resumeRuns } = deps;
  const settle = async (end: RunOutcome) => {
    if (await recorder.settle(end)) telemetry.settled(end, run.created_at);
  };
  // Every step is stored before the run is parked (a resume continues after the last one) or settled.
  await recorder.flushed();
  if (recorder.leaseLost) return; // another process continues it: nothing more is written here
  const stopping = deps.stopSignal.aborted;
  if (outcome === 'handed over' || (stopping && resumeRuns && outcome.status === 'CANCELLED')) {
    // Stopping: the run goes on elsewhere from its last checkpoint, at once.
    await leases.releaseLease(db, { runId: run.id, epoch }).catch((error: unknown) => runLogger.warn({ err: error }, 'could not release the lease; the run is continued when it lapses'));
    return;
  }
  if (stopping && outcome.status === 'CANCELLED') {
    outcome = { ...outcome, status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage: 'The server stopped before the run finished.' };
  }
  if (outcome.status === 'WAITING_FOR_APPROVAL' && outcome.suspension) {
    try {
      if (!context) throw new Error('no run context to store with the suspension');
      const stored: SuspendedRun = { ...context, suspension: outcome.suspension };
      const parked = await suspendRun(
        db,
        run.id,
        {
          sealedState: sealSuspendedRun(secrets, run.id, stored),
          digest: outcome.suspension.digest,
          iterations: outcome.iterations,
          promptTokens: outcome.usage.promptTokens,
          completionTokens: outcome.usage.completionTokens,
          estimatedCost: outcome.usage.cost,
        },
        epoch,
      );
      if (!parked) throw new Error('the run was no longer RUNNING under this lease');
      recorder.announceSuspension(outcome.suspension, parked);
      telemetry.parked(outcome, outcome.suspension.digest);
      return;
    } catch (error) {
      // A state that cannot be stored must not promise a resume.
      runLogger.error({ err: error }, 'could not store the suspended state; failing the run');
      await settle(failure('The run needed an approval but its state could not be stored.', outcome));
      return;
    }
  }
  await settle(outcome);
}

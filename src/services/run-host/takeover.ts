import type { RunRow } from '../../db/database.ts';
import * as leases from '../../db/repositories/run-leases.ts';
import { settleRun } from '../../db/repositories/run-settlement.ts';
import * as runs from '../../db/repositories/runs.ts';
import { findUserById } from '../../db/repositories/users.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { countSettledRun, observeRun } from '../../observability/run-telemetry.ts';
import type { ResumeReason, RunEventBus } from '../../runtime/events.ts';
import { openCheckpoint, type RunCheckpoint } from '../run-checkpoints.ts';
import { continueRun, executeRun, type RunExecutionDeps } from '../run-execution.ts';
import { toActor } from '../users.ts';
import { storeDecision } from './decisions.ts';
import { withoutCheckpoint, type Drive } from './drive.ts';

export const CHECKPOINT_UNREADABLE = 'The server running this run stopped, and its checkpoint could not be opened (was AIRLOCK_MASTER_KEY changed?).';
/** Runs one look for orphans claims at most: a backlog is taken over over several looks, by every instance. */
export const CLAIM_BATCH = 16;

/** What continuing the runs of processes that are gone reads and writes. */
export interface TakeoverDeps {
  readonly services: RunExecutionDeps & { readonly bus: RunEventBus<RunRow>; readonly metrics?: Metrics };
  /** This process as a lease owner, and the lease it takes on a claimed run. */
  readonly owner: string;
  readonly leaseMs: number;
  /** AIRLOCK_RESUME_RUNS: false = no run is ever claimed (the stale sweep settles them INTERRUPTED). */
  readonly resumeRuns: boolean;
  /** Aborted when the host stops: nothing more is claimed. */
  readonly stopSignal: AbortSignal;
  drive(drive: Drive): void;
}

/**
 * Looks for runs whose process is gone — their lease lapsed, or, with `everyOtherOwner` (an
 * embedded database at start), every run another process owns — claims up to CLAIM_BATCH of them
 * and continues each here. A full batch looks again at once. Returns how many it claimed.
 */
export async function claimOrphans(deps: TakeoverDeps, everyOtherOwner = false): Promise<number> {
  const { owner, leaseMs, services } = deps;
  if (deps.stopSignal.aborted) return 0;
  if (!deps.resumeRuns) return 0;
  const claimed = await leases.claimOrphanedRuns(services.db, { owner, leaseMs, limit: CLAIM_BATCH, everyOtherOwner });
  // A full batch: look again at once, until every orphan is claimed (other instances claim beside this one: SKIP LOCKED).
  if (claimed.length === CLAIM_BATCH) setImmediate(() => void claimOrphans(deps, everyOtherOwner).catch((error: unknown) => services.logger.warn({ err: error }, 'continuing runs whose process is gone failed')));
  for (const run of claimed) {
    const { handed_over: handedOver, ...row } = run;
    const reason: ResumeReason = handedOver ? 'HANDED_OVER' : everyOtherOwner ? 'RESTARTED' : 'LEASE_EXPIRED';
    await takeOver(deps, row, reason).catch((error: unknown) => services.logger.error({ err: error, runId: run.id }, 'could not continue a run taken over; it is claimed again when its lease lapses'));
  }
  return claimed.length;
}

/**
 * Continues a run claimed from a process that is gone: from its sealed checkpoint, as its user,
 * after the steps already stored, announced by a `resumed` event. A cancellation asked for
 * meanwhile is honoured instead; a checkpoint that cannot be opened settles the run INTERRUPTED.
 */
export async function takeOver(deps: TakeoverDeps, claimed: RunRow, reason: ResumeReason): Promise<void> {
  const { services } = deps;
  const { db, bus, secrets } = services;
  const lease = { runId: claimed.id, epoch: claimed.lease_epoch };
  const runLogger = services.logger.child({ runId: claimed.id });
  const end = (row: RunRow | undefined) => {
    if (!row) return;
    bus.publish({ type: 'finished', runId: row.id, finalContent: null, run: row });
    countSettledRun(services.metrics, row);
  };
  let checkpoint: RunCheckpoint;
  try {
    if (claimed.checkpoint === null) throw new Error('the run has no checkpoint');
    checkpoint = openCheckpoint(secrets, claimed.id, claimed.checkpoint);
  } catch (error) {
    runLogger.error({ err: error }, 'could not open the checkpoint of a run taken over; settling it INTERRUPTED');
    end(await leases.settleClaimedAsInterrupted(db, lease, CHECKPOINT_UNREADABLE));
    return;
  }
  const afterSequence = await runs.lastStepSequence(db, claimed.id);
  const userRow = claimed.user_id ? await findUserById(db, claimed.user_id) : undefined;
  const actor = userRow ? toActor(userRow) : null;
  const telemetry = observeRun(services.metrics, {
    runId: claimed.id,
    configurationId: claimed.configuration_id ?? '',
    userId: claimed.user_id,
    level: claimed.privacy_level,
    startedIn: claimed.trace_parent,
  });
  runLogger.warn({ reason, epoch: lease.epoch, fromSequence: afterSequence + 1 }, 'continuing a run whose process is gone');
  bus.publish({ type: 'resumed', runId: claimed.id, fromSequence: afterSequence + 1, reason, run: withoutCheckpoint(claimed) });
  const request = { runId: claimed.id, configurationId: claimed.configuration_id ?? '', actor };
  const state = 'point' in checkpoint ? checkpoint.point.state : null;
  deps.drive({
    run: claimed,
    epoch: lease.epoch,
    telemetry,
    logger: runLogger,
    afterSequence,
    ...(state ? { progress: { iterations: state.iterations, usage: state.usage } } : {}),
    ...('point' in checkpoint ? { context: { settings: checkpoint.settings, allowList: checkpoint.allowList } } : {}),
    before: async (recorder) => {
      if (claimed.cancel_requested_at === null) {
        // A decision claimed by the process that died, its APPROVAL step not stored yet: stored first.
        return 'point' in checkpoint && checkpoint.approval
          ? storeDecision(recorder, { step: checkpoint.approval, point: checkpoint.point }, { resumeRuns: deps.resumeRuns, telemetry, logger: runLogger, run: claimed })
          : true;
      }
      const settled = await settleRun(
        db,
        claimed.id,
        { status: 'CANCELLED', terminationReason: 'CANCELLED', truncated: false, iterations: state?.iterations ?? 0, finalContent: null, promptTokens: state?.usage.promptTokens ?? 0, completionTokens: state?.usage.completionTokens ?? 0, estimatedCost: state?.usage.cost ?? 0, errorMessage: null },
        lease.epoch,
      );
      end(settled);
      return false;
    },
    loop: async (driven) => {
      if ('point' in checkpoint) return continueRun(services, { ...driven, ...request }, { point: checkpoint.point, settings: checkpoint.settings, allowList: checkpoint.allowList });
      const selection = claimed.tool_selection === null ? null : (JSON.parse(String(claimed.tool_selection)) as string[]);
      return (await executeRun(services, { ...driven, ...request, prompt: checkpoint.start.prompt, selection })).outcome;
    },
  });
}

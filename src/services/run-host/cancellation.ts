import { z } from 'zod';
import type { Db, RunRow } from '../../db/database.ts';
import { settleRun } from '../../db/repositories/run-settlement.ts';
import * as runs from '../../db/repositories/runs.ts';
import { NotFoundError } from '../../errors.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { countSettledRun } from '../../observability/run-telemetry.ts';
import type { Broadcast } from '../../runtime/broadcast.ts';
import type { RunEventBus } from '../../runtime/events.ts';
import type { Actor } from '../../tools/tool.ts';
import { visibleRun } from '../approvals.ts';
import type { DrivenRuns } from './driven-runs.ts';

/** A run to stop, asked for on one instance, for the instance that drives it. */
export interface RunCancellation {
  readonly runId: string;
}

export const runCancellationSchema: z.ZodType<RunCancellation> = z.object({ runId: z.uuid() });

/**
 * Whether the database bears out a cancellation that came from another instance: its run's row says
 * a cancel was requested (`cancelRun` stores that before publishing). Anything else — a message
 * forged on Redis, or one for a run that does not exist — is not acted on.
 */
export async function confirmCancellation(db: Db, { runId }: RunCancellation): Promise<boolean> {
  const [run] = await runs.findRunsByIds(db, [runId]);
  return run !== undefined && run.cancel_requested_at !== null;
}

/** What cancelling runs reads and writes: the runs, their events, the broadcast to the instance driving a run. */
export interface CancellationDeps {
  readonly db: Db;
  readonly bus: RunEventBus<RunRow>;
  readonly cancellations: Broadcast<RunCancellation>;
  readonly metrics?: Metrics;
  /** The runs this process drives. */
  readonly driven: DrivenRuns;
}

/**
 * Cancels a run its owner or an admin sees. A run driven by this process stops at its next step
 * boundary; a run waiting for approval is settled CANCELLED now; a run driven by another instance
 * is asked to stop (stored, read by its instance's heartbeat, and broadcast to reach it at once).
 * Returns the run as it was read (or as settled, when it was waiting).
 */
export async function cancelRun(deps: CancellationDeps, actor: Actor, runId: string): Promise<RunRow> {
  const run = await visibleRun(deps.db, actor, runId);
  if (!run) throw new NotFoundError('Run', runId);
  if (deps.driven.abort(run.id)) return run;
  if (run.status === 'WAITING_FOR_APPROVAL') return (await cancelWaitingRun(deps, run)) ?? run;
  if (run.status === 'RUNNING' && (await runs.requestCancel(deps.db, run.id))) deps.cancellations.publish({ runId: run.id });
  return run;
}

/**
 * Cancels every run of a user who lost access: those this process drives end CANCELLED at their
 * next step boundary, those waiting for approval are settled CANCELLED now.
 */
export async function cancelRunsOf(deps: CancellationDeps, userId: string): Promise<void> {
  deps.driven.abortRunsOf(userId);
  for (const run of await runs.listWaitingRuns(deps.db, userId)) await cancelWaitingRun(deps, run);
}

/** Stops the runs driven here that another instance was asked to cancel; returns the unsubscribe. */
export function listenForCancellations(deps: Pick<CancellationDeps, 'cancellations' | 'driven'>): () => void {
  return deps.cancellations.subscribe(({ runId }) => void deps.driven.abort(runId));
}

/** A run waiting for approval is driven by no process: cancelling it settles it here. */
async function cancelWaitingRun(deps: CancellationDeps, run: RunRow): Promise<RunRow | undefined> {
  const settled = await settleRun(deps.db, run.id, {
    status: 'CANCELLED',
    terminationReason: 'CANCELLED',
    truncated: false,
    iterations: run.iterations,
    finalContent: null,
    promptTokens: run.prompt_tokens,
    completionTokens: run.completion_tokens,
    estimatedCost: run.estimated_cost,
    errorMessage: null,
  });
  if (settled) deps.bus.publish({ type: 'finished', runId: run.id, finalContent: null, run: settled });
  if (settled) countSettledRun(deps.metrics, settled);
  return settled;
}

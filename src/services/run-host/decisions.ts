import type { RunRow } from '../../db/database.ts';
import * as runs from '../../db/repositories/runs.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { observeRun, type RunTelemetry } from '../../observability/run-telemetry.ts';
import type { RunEventBus } from '../../runtime/events.ts';
import type { ResumePoint } from '../../runtime/resume-point.ts';
import type { RunStep } from '../../runtime/run.ts';
import type { RunRecorder } from '../../runtime/run-recorder.ts';
import type { Actor } from '../../tools/tool.ts';
import { claimDecision } from '../approvals.ts';
import { sealCheckpoint } from '../run-checkpoints.ts';
import { resumeRun, type RunExecutionDeps, type SuspendedRun } from '../run-execution.ts';
import { failure, withoutCheckpoint, type Drive } from './drive.ts';

/** A decision on the turn a run waits on: its APPROVAL step, and the point the turn resumes from. */
export interface Decision {
  readonly step: Extract<RunStep, { kind: 'APPROVAL' }>;
  readonly point: ResumePoint;
}

/**
 * The decision as its APPROVAL step, and where the turn resumes from: the turn's calls, none run
 * yet, approved or refused (a denial counts one more denied turn). Stored with the claim for
 * whoever continues the run, and recorded before any call of the turn runs.
 */
export function decisionOf(
  suspended: SuspendedRun,
  decision: { readonly approver: Actor; readonly approved: boolean; readonly turnDigest: string; readonly decidedAt: string },
): Decision {
  const { approver, approved, turnDigest, decidedAt } = decision;
  const { round, state, calls } = suspended.suspension;
  return {
    step: { kind: 'APPROVAL', round, approverId: approver.id, approverName: approver.name, approved, digest: turnDigest, decidedAt },
    point: {
      at: 'tools',
      round,
      state: approved ? state : { ...state, deniedTurns: (state.deniedTurns ?? 0) + 1 },
      calls,
      mode: approved ? 'approved' : 'denied',
      done: [],
      started: [],
    },
  };
}

/**
 * Stores a decision's APPROVAL step (with the turn's resume point, when runs are durable) BEFORE
 * any call of the turn runs; if it cannot be stored, nothing of the turn runs and the run fails.
 * False = stop (also when the lease was lost meanwhile: the run is another process's now).
 */
export async function storeDecision(
  recorder: RunRecorder<RunRow>,
  decision: Decision,
  pass: { readonly resumeRuns: boolean; readonly telemetry: RunTelemetry; readonly logger: Logger; readonly run: RunRow },
): Promise<boolean> {
  const { point } = decision;
  try {
    await recorder.recordRequiredStep(decision.step, pass.resumeRuns ? point : undefined);
    return true;
  } catch (error) {
    if (recorder.leaseLost) return false;
    pass.logger.error({ err: error }, 'could not store the approval decision; the writes do not run');
    const soFar = { ...failure(''), iterations: point.state.iterations, usage: point.state.usage };
    const end = failure('The approval decision could not be stored, so the approved calls did not run.', soFar);
    if (await recorder.settle(end)) pass.telemetry.settled(end, pass.run.created_at);
    return false;
  }
}

/** What deciding on a waiting run reads and writes. */
export interface DecisionDeps {
  readonly services: RunExecutionDeps & { readonly bus: RunEventBus<RunRow>; readonly metrics?: Metrics };
  /** This process as a lease owner: the resumed run is driven here, under a new epoch. */
  readonly owner: string;
  readonly leaseMs: number;
  /** AIRLOCK_RESUME_RUNS: the claim stores the decision and the turn's resume point, sealed. */
  readonly resumeRuns: boolean;
  drive(drive: Drive): void;
}

/**
 * Approves or denies the turn a run waits on (`claimDecision`: the digest, the approver's own
 * right to run each write, one winner among concurrent deciders), then resumes the run here in the
 * background, its APPROVAL step stored first. Returns the claimed run.
 */
export async function decideRun(deps: DecisionDeps, actor: Actor, runId: string, turnDigest: string, approved: boolean): Promise<RunRow> {
  const { services, owner, leaseMs, resumeRuns } = deps;
  const { db, bus, logger, secrets } = services;
  const decidedAt = new Date().toISOString();
  const decide = (suspended: SuspendedRun) => decisionOf(suspended, { approver: actor, approved, turnDigest, decidedAt });
  const { claimed: run, suspended, configuration, initiator } = await claimDecision(services, actor, runId, turnDigest, approved, {
    owner,
    ms: leaseMs,
    checkpoint: (opened) => {
      if (!resumeRuns) return null;
      const { step, point } = decide(opened);
      return sealCheckpoint(secrets, runId, { point, settings: opened.settings, allowList: opened.allowList, approval: step });
    },
  });
  const decision = decide(suspended);
  const runLogger = logger.child({ runId: run.id });
  const telemetry = observeRun(services.metrics, {
    runId: run.id,
    configurationId: configuration.id,
    userId: run.user_id,
    level: run.privacy_level,
    startedIn: run.trace_parent,
    decision: { approved, digest: turnDigest },
  });
  // Published once the claim committed, before the resumed run's first step.
  bus.publish({ type: 'decided', runId: run.id, digest: turnDigest, approved, decidedBy: { id: actor.id, name: actor.name }, run: withoutCheckpoint(run) });
  deps.drive({
    run,
    epoch: run.lease_epoch,
    telemetry,
    logger: runLogger,
    afterSequence: await runs.lastStepSequence(db, run.id),
    progress: { iterations: run.iterations, usage: { promptTokens: run.prompt_tokens, completionTokens: run.completion_tokens, cost: run.estimated_cost } },
    context: suspended,
    before: (recorder) => storeDecision(recorder, decision, { resumeRuns, telemetry, logger: runLogger, run }),
    loop: (request) => resumeRun(services, { ...request, runId: run.id, configurationId: configuration.id, actor: initiator }, suspended, { approved }),
  });
  return run;
}

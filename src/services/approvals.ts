import { checkGate } from '../access/gate.ts';
import type { ConfigurationRow, Db, RunRow } from '../db/database.ts';
import type { SecretBox } from '../db/secret-box.ts';
import { findConfigurationsByIds } from '../db/repositories/configurations.ts';
import { claimSuspendedRun } from '../db/repositories/run-suspension.ts';
import { findRunsByIds, listWaitingRuns } from '../db/repositories/runs.ts';
import { loadToolState } from '../db/repositories/tool-state.ts';
import { findUserById } from '../db/repositories/users.ts';
import { ConflictError, ForbiddenError, NotFoundError, StaleApprovalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ToolData } from '../tools/data.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { callOfPreview } from '../runtime/approval.ts';
import type { Actor } from '../tools/tool.ts';
import type { SuspendedRun } from './run-execution.ts';
import { toActor } from './users.ts';

/** What deciding on a waiting run reads: the runs, the sealed state's key box, the gate's inputs. */
export interface ApprovalDeps {
  readonly db: Db;
  readonly secrets: SecretBox;
  readonly logger: Logger;
  readonly registry: ToolRegistry;
  readonly toolData: ToolData;
}

export interface PendingApproval {
  readonly run: RunRow;
  readonly suspended: SuspendedRun;
}

/** A decision that won the claim: the run is RUNNING again and its resume is the caller's. */
export interface ClaimedDecision {
  readonly claimed: RunRow;
  readonly suspended: SuspendedRun;
  readonly configuration: ConfigurationRow;
  /** The user the run resumes as (null when the initiator was deleted). */
  readonly initiator: Actor | null;
}

/** The suspended state is sealed per run, so a sealed blob cannot be replayed onto another run. */
const sealContext = (runId: string) => `run:${runId}:suspended`;

export function sealSuspendedRun(secrets: SecretBox, runId: string, suspended: SuspendedRun): string {
  return secrets.seal(JSON.stringify(suspended), sealContext(runId));
}

/** The sealed state of a waiting run, opened; null when it is not waiting or cannot be opened (logged). */
export function openSuspendedRun(deps: Pick<ApprovalDeps, 'secrets' | 'logger'>, run: RunRow): SuspendedRun | null {
  if (run.status !== 'WAITING_FOR_APPROVAL' || !run.suspended_state) return null;
  try {
    return JSON.parse(deps.secrets.open(run.suspended_state, sealContext(run.id))) as SuspendedRun;
  } catch (error) {
    deps.logger.error({ err: error, runId: run.id }, 'could not open the suspended state of a run');
    return null;
  }
}

/** The stored run, if the actor may see it (owner or admin). */
export async function visibleRun(db: Db, actor: Actor, runId: string): Promise<RunRow | null> {
  const [run] = await findRunsByIds(db, [runId]);
  if (!run) return null;
  return actor.isAdmin || run.user_id === actor.id ? run : null;
}

/** Runs waiting for a decision that `actor` may see (admins: all; others: their own), oldest first, at most `limit`. */
/** The most waiting runs one read returns (the oldest first): a list is never unbounded. */
export const MAX_PENDING_APPROVALS = 100;

export async function pendingApprovals(deps: Pick<ApprovalDeps, 'db' | 'secrets' | 'logger'>, actor: Actor, limit = MAX_PENDING_APPROVALS): Promise<PendingApproval[]> {
  const waiting = await listWaitingRuns(deps.db, actor.isAdmin ? null : actor.id, limit);
  return waiting.flatMap((run) => {
    const suspended = openSuspendedRun(deps, run);
    return suspended ? [{ run, suspended }] : [];
  });
}

/**
 * Checks a decision on the turn a run waits on and claims the run for it: the digest must name that
 * turn, an approver must be allowed to run every pending write, and of concurrent deciders exactly
 * one wins the claim. Throws the typed refusal otherwise.
 */
export async function claimDecision(
  deps: ApprovalDeps,
  actor: Actor,
  runId: string,
  turnDigest: string,
  approved: boolean,
  /** The lease the deciding process takes on the resumed run, and the checkpoint it stores with the claim (made from the opened state). */
  lease?: { readonly owner: string; readonly ms: number; checkpoint(suspended: SuspendedRun): string | null },
): Promise<ClaimedDecision> {
  const run = await visibleRun(deps.db, actor, runId);
  if (!run) throw new NotFoundError('Run', runId);
  if (run.status !== 'WAITING_FOR_APPROVAL') throw new ConflictError('The run is not waiting for an approval.');
  if (turnDigest !== run.suspended_digest) {
    throw new StaleApprovalError('The turn digest does not match the turn this run waits on; reload the pending approval.');
  }
  const suspended = openSuspendedRun(deps, run);
  if (!suspended) throw new ConflictError('The run is not waiting for an approval.');
  const [configuration] = run.configuration_id ? await findConfigurationsByIds(deps.db, [run.configuration_id]) : [];
  if (!configuration) throw new NotFoundError('Configuration', run.configuration_id ?? '');
  if (approved) {
    if (configuration.require_second_approver && actor.id === run.user_id) {
      throw new ForbiddenError('This configuration requires a second person to approve; you may deny your own run.');
    }
    await assertApproverMayRun(deps, actor, suspended);
  }
  const claimed = await claimSuspendedRun(deps.db, run.id, turnDigest, lease && { owner: lease.owner, ms: lease.ms, checkpoint: lease.checkpoint(suspended) });
  if (!claimed) throw new ConflictError('Another approver decided this turn first.');
  const initiatorRow = claimed.user_id ? await findUserById(deps.db, claimed.user_id) : undefined;
  return { claimed, suspended, configuration, initiator: initiatorRow ? toActor(initiatorRow) : null };
}

/**
 * Approving a write means the approver could run it themselves: every pending write call must pass
 * the gate for the APPROVER (same allow-list, current switches) and the tool's data-level check.
 */
async function assertApproverMayRun(deps: ApprovalDeps, approver: Actor, suspended: SuspendedRun): Promise<void> {
  const gate = {
    registry: deps.registry,
    state: await loadToolState(deps.db),
    actor: approver,
    allowList: suspended.allowList === null ? null : new Set(suspended.allowList),
  };
  const { calls, previews } = suspended.suspension;
  for (const preview of previews) {
    const toolName = preview.toolName;
    const decision = checkGate(gate, toolName);
    if (!decision.allowed) {
      if (decision.reason === 'toolDisabled' || decision.reason === 'notRegistered') continue; // refused at resume anyway
      throw new ForbiddenError(`You may not run "${toolName}" yourself, so you cannot approve it.`);
    }
    const call = callOfPreview(calls, preview);
    const parsed = decision.tool.parameters.safeParse(call?.arguments ?? {});
    if (!parsed.success || !decision.tool.mayRun) continue;
    const allowed = await decision.tool.mayRun(parsed.data, {
      actor: approver,
      logger: deps.logger,
      signal: AbortSignal.timeout(10_000),
      runId: '',
      data: deps.toolData,
    });
    if (!allowed) throw new ForbiddenError(`You may not run "${toolName}" on this data yourself, so you cannot approve it.`);
  }
}

import type { RunOutcome } from '../runtime/run.ts';
import { LeaseLostError, type RunRepository } from '../runtime/run-recorder.ts';
import type { Db, RunRow } from './database.ts';
import type { RunWriter } from './run-batch-writer.ts';
import { LEASE_MOVED_ON } from './repositories/run-leases.ts';
import { settleRun, settleRunWithoutOutcome } from './repositories/run-settlement.ts';
import { findRunsByIds, markAuditIncomplete } from './repositories/runs.ts';

/** How a pass of the loop ended, as both ways of settling a run store it. */
const endOf = (outcome: RunOutcome) => ({
  status: outcome.status,
  terminationReason: outcome.terminationReason ?? 'COMPLETED',
  truncated: outcome.truncated,
  iterations: outcome.iterations,
});

const leaseMovedOn = (error: unknown) => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === LEASE_MOVED_ON;

/** The storage of a run recorder: steps through the group-commit writer, the outcome and flags by row. */
export function createRunRepository(db: Db, writer: RunWriter): RunRepository<RunRow> {
  /** A refused settlement: settled already (exactly-once: null), or still open under another process's epoch (thrown). */
  const refused = async (runId: string, epoch: number | undefined): Promise<null> => {
    const [current] = epoch === undefined ? [] : await findRunsByIds(db, [runId]);
    if (current?.status === 'RUNNING' && current.lease_epoch !== epoch) throw new LeaseLostError(runId);
    return null;
  };
  return {
    insertStep: (runId, sequence, step, lease) =>
      writer
        .insertStep({ runId, sequence, kind: step.kind, round: step.round, durationMs: step.durationMs, payload: step, epoch: lease?.epoch ?? null, ...(lease?.checkpoint ? { checkpoint: lease.checkpoint } : {}) })
        .catch((error: unknown) => {
          throw leaseMovedOn(error) ? new LeaseLostError(runId) : error;
        }),
    settle: async (runId, outcome: RunOutcome, storedFinalContent, epoch) => {
      const settlement = {
        ...endOf(outcome),
        finalContent: storedFinalContent,
        promptTokens: outcome.usage.promptTokens,
        completionTokens: outcome.usage.completionTokens,
        estimatedCost: outcome.usage.cost,
        errorMessage: outcome.errorMessage,
      };
      return (await settleRun(db, runId, settlement, epoch ?? null)) ?? refused(runId, epoch);
    },
    settleWithoutOutcome: async (runId, outcome: RunOutcome, errorMessage, epoch) =>
      (await settleRunWithoutOutcome(db, runId, { ...endOf(outcome), errorMessage }, epoch ?? null)) ?? refused(runId, epoch),
    markAuditIncomplete: (runId) => markAuditIncomplete(db, runId),
    expedite: () => writer.expedite(),
  };
}

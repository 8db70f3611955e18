import type { RunOutcome } from '../runtime/run.ts';
import type { RunRepository } from '../runtime/run-recorder.ts';
import type { Db, RunRow } from './database.ts';
import type { RunWriter } from './run-batch-writer.ts';
import { markAuditIncomplete, settleRun, settleRunWithoutOutcome } from './repositories/runs.ts';

/** How a pass of the loop ended, as both ways of settling a run store it. */
const endOf = (outcome: RunOutcome) => ({
  status: outcome.status,
  terminationReason: outcome.terminationReason ?? 'COMPLETED',
  truncated: outcome.truncated,
  iterations: outcome.iterations,
});

/** The storage of a run recorder: steps through the group-commit writer, the outcome and flags by row. */
export function createRunRepository(db: Db, writer: RunWriter): RunRepository<RunRow> {
  return {
    insertStep: (runId, sequence, step) =>
      writer.insertStep({ runId, sequence, kind: step.kind, round: step.round, durationMs: step.durationMs, payload: step }),
    settle: async (runId, outcome: RunOutcome, storedFinalContent) =>
      (await settleRun(db, runId, {
        ...endOf(outcome),
        finalContent: storedFinalContent,
        promptTokens: outcome.usage.promptTokens,
        completionTokens: outcome.usage.completionTokens,
        estimatedCost: outcome.usage.cost,
        errorMessage: outcome.errorMessage,
      })) ?? null,
    settleWithoutOutcome: async (runId, outcome: RunOutcome, errorMessage) =>
      (await settleRunWithoutOutcome(db, runId, { ...endOf(outcome), errorMessage })) ?? null,
    markAuditIncomplete: (runId) => markAuditIncomplete(db, runId),
    expedite: () => writer.expedite(),
  };
}

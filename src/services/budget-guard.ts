import { randomUUID } from 'node:crypto';
import type { BudgetRow, Db } from '../db/database.ts';
import type { RunWriter } from '../db/run-batch-writer.ts';
import { findBudgetsOf, sumUsageSince } from '../db/repositories/usage.ts';
import { checkBudgets, periodStart, type ApplicableBudget } from '../runtime/budget.ts';
import type { Logger } from '../logger.ts';
import type { BudgetGuard } from '../runtime/loop.ts';

export interface BudgetSubject {
  readonly userId: string | null;
  readonly configurationId: string;
  readonly modelId: string;
  readonly runId: string;
}

/**
 * Budgets and usage of ONE run over the database.
 * - The budgets that apply are read once per run (with its setup, or at its first pre-flight): a
 *   budget set while a run is going applies from the next run (cancel a runaway run with
 *   `cancelRun`). Without budgets, a pre-flight costs no query.
 * - Every pre-flight (when budgets apply) reads the current totals, so concurrent runs of one user
 *   see each other's recorded calls; a call in flight is not yet counted, but the planned cost of
 *   THIS call is, which bounds the overshoot to the calls in flight.
 * - `record` queues the usage row on the shared writer (it goes out with the run's steps) and
 *   returns; a pre-flight under budgets waits for it. A usage row that could not be stored is
 *   logged and fails the run at the next pre-flight that knows of it (at most one call later):
 *   unrecorded spending must not go on.
 */
export interface RunBudgetGuard extends BudgetGuard {
  /** Resolves once every usage row recorded so far is stored or was logged as lost; never throws. */
  flushed(): Promise<void>;
}

export function createBudgetGuard(
  storage: { readonly db: Db; readonly writer: RunWriter; readonly logger: Pick<Logger, 'error'> },
  subject: BudgetSubject,
  options: { readonly budgets?: readonly BudgetRow[]; readonly now?: () => Date } = {},
): RunBudgetGuard {
  const { db, writer } = storage;
  const now = options.now ?? (() => new Date());
  let budgets: Promise<readonly BudgetRow[]> | null = options.budgets ? Promise.resolve(options.budgets) : null;
  let recorded: Promise<void> = Promise.resolve();
  let recordFailure: { error: unknown } | null = null;
  const throwIfUnrecorded = () => {
    if (recordFailure) throw recordFailure.error;
  };
  return {
    async preflight(plannedCost) {
      throwIfUnrecorded();
      budgets ??= findBudgetsOf(db, subject.userId, subject.configurationId);
      const rows = await budgets;
      if (rows.length === 0) return null;
      // The totals must include this run's last call: its row may still wait in the writer.
      writer.expedite();
      await recorded;
      throwIfUnrecorded();
      const at = now();
      const applicable: ApplicableBudget[] = await Promise.all(
        rows.map(async (budget) => ({
          scope: budget.scope,
          period: budget.period,
          limits: { maxRequests: budget.max_requests, maxTokens: budget.max_tokens, maxCost: budget.max_cost },
          spent: await sumUsageSince(db, { scope: budget.scope, id: budget.subject_id }, periodStart(budget.period, at)),
        })),
      );
      return checkBudgets(applicable, plannedCost);
    },
    async record(usage) {
      recorded = writer
        .insertUsage({
          id: randomUUID(),
          userId: subject.userId,
          configurationId: subject.configurationId,
          runId: subject.runId,
          modelId: subject.modelId,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          cost: usage.cost,
        })
        .catch((error: unknown) => {
          storage.logger.error({ err: error, runId: subject.runId }, 'could not record the usage of a provider call; the run stops before its next call');
          recordFailure = { error };
        });
    },
    flushed: () => {
      writer.expedite();
      return recorded;
    },
  };
}

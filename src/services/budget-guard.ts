import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { findBudgetsOf, insertUsageRecord, sumUsageSince } from '../db/repositories/usage.ts';
import { checkBudgets, periodStart, type ApplicableBudget } from '../runtime/budget.ts';
import type { BudgetGuard } from '../runtime/loop.ts';

export interface BudgetSubject {
  readonly userId: string | null;
  readonly configurationId: string;
  readonly modelId: string;
  readonly runId: string;
}

/**
 * Budgets and usage over the database. Every pre-flight reads the current totals, so concurrent
 * runs of one user see each other's recorded calls (a call in flight is not yet counted: the
 * planned cost of THIS call is, which bounds the overshoot to the calls in flight).
 */
export function createBudgetGuard(db: Db, subject: BudgetSubject, now: () => Date = () => new Date()): BudgetGuard {
  return {
    async preflight(plannedCost) {
      const budgets = await findBudgetsOf(db, subject.userId, subject.configurationId);
      if (budgets.length === 0) return null;
      const at = now();
      const applicable: ApplicableBudget[] = await Promise.all(
        budgets.map(async (budget) => ({
          scope: budget.scope,
          period: budget.period,
          limits: { maxRequests: budget.max_requests, maxTokens: budget.max_tokens, maxCost: budget.max_cost },
          spent: await sumUsageSince(db, { scope: budget.scope, id: budget.subject_id }, periodStart(budget.period, at)),
        })),
      );
      return checkBudgets(applicable, plannedCost);
    },
    async record(usage) {
      await insertUsageRecord(db, {
        id: randomUUID(),
        userId: subject.userId,
        configurationId: subject.configurationId,
        runId: subject.runId,
        modelId: subject.modelId,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        cost: usage.cost,
      });
    },
  };
}

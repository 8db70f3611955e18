/**
 * Budget pre-flight, as pure rules. A limit of 0 means unlimited. Checked before EVERY provider
 * call, against every budget that applies (user and configuration, day and month):
 * deny if `requests + 1 > maxRequests`, `tokens > maxTokens` or `cost + plannedCost > maxCost`.
 * The service applies them to counters it holds locked, and reserves the call when they allow it
 * (services/budget-guard.ts), so concurrent calls are checked one after the other.
 */

export interface BudgetLimits {
  readonly maxRequests: number;
  readonly maxTokens: number;
  readonly maxCost: number;
}

/** What was already spent in the budget's current period. */
export interface SpentSoFar {
  readonly requests: number;
  readonly tokens: number;
  readonly cost: number;
}

export interface ApplicableBudget {
  readonly scope: 'USER' | 'CONFIGURATION';
  readonly period: 'DAILY' | 'MONTHLY';
  readonly limits: BudgetLimits;
  readonly spent: SpentSoFar;
}

export type BudgetDenial = {
  readonly scope: ApplicableBudget['scope'];
  readonly period: ApplicableBudget['period'];
  readonly exceeded: 'requests' | 'tokens' | 'cost';
};

/** The first budget that refuses the next call, or null when every budget allows it. */
export function checkBudgets(budgets: readonly ApplicableBudget[], plannedCost: number): BudgetDenial | null {
  for (const { scope, period, limits, spent } of budgets) {
    if (limits.maxRequests > 0 && spent.requests + 1 > limits.maxRequests) return { scope, period, exceeded: 'requests' };
    if (limits.maxTokens > 0 && spent.tokens > limits.maxTokens) return { scope, period, exceeded: 'tokens' };
    if (limits.maxCost > 0 && spent.cost + plannedCost > limits.maxCost) return { scope, period, exceeded: 'cost' };
  }
  return null;
}

/** Start of the current budget period (UTC), for summing usage. */
export function periodStart(period: ApplicableBudget['period'], now: Date): Date {
  return period === 'DAILY'
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

import { sql } from 'kysely';
import type { BudgetPeriod, BudgetRow, BudgetScope, Db } from '../database.ts';

export interface BudgetLimits {
  readonly maxRequests: number;
  readonly maxTokens: number;
  readonly maxCost: number;
}

export async function listBudgets(db: Db): Promise<BudgetRow[]> {
  return db.selectFrom('budgets').selectAll().orderBy('scope').orderBy('subject_id').orderBy('period').execute();
}

/** Inserts or replaces the budget of one subject and period. */
export async function saveBudget(
  db: Db,
  id: string,
  target: { scope: BudgetScope; subjectId: string; period: BudgetPeriod },
  limits: BudgetLimits,
): Promise<BudgetRow> {
  const values = { max_requests: limits.maxRequests, max_tokens: limits.maxTokens, max_cost: limits.maxCost };
  return db
    .insertInto('budgets')
    .values({ id, scope: target.scope, subject_id: target.subjectId, period: target.period, ...values })
    .onConflict((oc) =>
      oc.columns(['scope', 'subject_id', 'period']).doUpdateSet({ ...values, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

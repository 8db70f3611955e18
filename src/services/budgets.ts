import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BudgetRow, BudgetScope, Db } from '../db/database.ts';
import { BUDGET_PERIODS } from '../db/database.ts';
import { findCounter } from '../db/repositories/budget-counters.ts';
import * as budgets from '../db/repositories/budgets.ts';
import { sumUsageSince } from '../db/repositories/usage.ts';
import * as configurations from '../db/repositories/configurations.ts';
import * as users from '../db/repositories/users.ts';
import { NotFoundError } from '../errors.ts';
import { periodStart, type SpentSoFar } from '../runtime/budget.ts';
import { isUuid, parseInput } from './validate.ts';

/** Every limit: 0 means unlimited. Cost is in the currency units of the model prices. */
const limitsSchema = z.object({
  period: z.enum(BUDGET_PERIODS),
  maxRequests: z.number().int('must be a whole number').min(0, 'must not be negative').max(2_000_000_000).nullish(),
  maxTokens: z.number().int('must be a whole number').min(0, 'must not be negative').max(2_000_000_000).nullish(),
  maxCost: z.number().finite('must be a finite number').min(0, 'must not be negative').max(1e12).nullish(),
});

export async function setBudget(
  db: Db,
  subject: { scope: BudgetScope; id: string },
  input: unknown,
): Promise<BudgetRow> {
  const data = parseInput(limitsSchema, input);
  const exists = isUuid(subject.id)
    ? subject.scope === 'USER'
      ? await users.findUserById(db, subject.id)
      : (await configurations.findConfigurationsByIds(db, [subject.id]))[0]
    : undefined;
  if (!exists) throw new NotFoundError(subject.scope === 'USER' ? 'User' : 'Configuration', subject.id);
  return budgets.saveBudget(
    db,
    randomUUID(),
    { scope: subject.scope, subjectId: subject.id, period: data.period },
    { maxRequests: data.maxRequests ?? 0, maxTokens: data.maxTokens ?? 0, maxCost: data.maxCost ?? 0 },
  );
}

/**
 * What a budget has counted in its current period (the UTC day or month holding `now`).
 *
 * When the period has a counter (created at its first pre-flight), that counter: it is what the
 * budget enforces, so `spent` next to the limits says how close the next call is to a refusal. It
 * counts more than the usage records: calls reserved and still in flight (with their planned
 * cost), and calls that reached the provider but never answered (their request stays counted).
 * Without a counter (no call checked against this budget in the period yet), the usage records of
 * the subject since the period started: what the counter will be seeded with.
 */
export async function budgetSpent(db: Db, budget: Pick<BudgetRow, 'id' | 'scope' | 'subject_id' | 'period'>, now = new Date()): Promise<SpentSoFar> {
  const start = periodStart(budget.period, now);
  const counter = await findCounter(db, { budgetId: budget.id, periodStart: start });
  if (counter) return { requests: Number(counter.requests), tokens: Number(counter.tokens), cost: Number(counter.cost) };
  return sumUsageSince(db, { scope: budget.scope, id: budget.subject_id }, start);
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BudgetRow, BudgetScope, Db } from '../db/database.ts';
import { BUDGET_PERIODS } from '../db/database.ts';
import * as budgets from '../db/repositories/budgets.ts';
import * as configurations from '../db/repositories/configurations.ts';
import * as users from '../db/repositories/users.ts';
import { NotFoundError } from '../errors.ts';
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

import { decodeGlobalId, encodeGlobalId } from '../../global-id.ts';
import type { BudgetRow, BudgetScope } from '../../db/database.ts';
import { BUDGET_PERIODS, BUDGET_SCOPES } from '../../db/database.ts';
import { listBudgets } from '../../db/repositories/budgets.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { budgetSpent, setBudget } from '../../services/budgets.ts';
import { builder } from '../builder.ts';

const BudgetScopeEnum = builder.enumType('BudgetScope', { values: BUDGET_SCOPES });
const BudgetPeriodEnum = builder.enumType('BudgetPeriod', { values: BUDGET_PERIODS });

const SCOPE_OF_TYPENAME: Readonly<Record<string, BudgetScope>> = { User: 'USER', Configuration: 'CONFIGURATION' };
const TYPENAME_OF_SCOPE: Readonly<Record<BudgetScope, string>> = { USER: 'User', CONFIGURATION: 'Configuration' };

const BudgetSpentRef = builder.simpleObject('BudgetSpent', {
  description:
    "What the budget counts in its current period (UTC day or month): the counter it enforces once a call was checked against it this period (calls in flight count with their planned cost; a call that never answered keeps its request), otherwise the subject's usage records since the period started.",
  fields: (t) => ({
    requests: t.int({ description: 'Provider calls.' }),
    // Float: counters are bigint and may pass 2^31; exact below 2^53.
    tokens: t.float({ description: 'Prompt and completion tokens of the answered calls.' }),
    cost: t.float({ description: 'In the currency of the model prices.' }),
  }),
});

const BudgetRef = builder.objectRef<BudgetRow>('Budget').implement({
  description: 'Spending limits of one user or configuration per period; 0 means unlimited.',
  fields: (t) => ({
    scope: t.field({ type: BudgetScopeEnum, resolve: (budget) => budget.scope }),
    subjectId: t.id({
      description: 'Global id of the User or Configuration the budget limits.',
      resolve: (budget) => encodeGlobalId(TYPENAME_OF_SCOPE[budget.scope], budget.subject_id),
    }),
    period: t.field({ type: BudgetPeriodEnum, resolve: (budget) => budget.period }),
    maxRequests: t.exposeInt('max_requests'),
    maxTokens: t.exposeInt('max_tokens'),
    maxCost: t.exposeFloat('max_cost'),
    updatedAt: t.field({ type: 'DateTime', resolve: (budget) => budget.updated_at }),
    spent: t.field({ type: BudgetSpentRef, resolve: (budget, _args, context) => budgetSpent(context.db, budget) }),
  }),
});

const SetBudgetInput = builder.inputType('SetBudgetInput', {
  fields: (t) => ({
    subjectId: t.id({ required: true, description: 'Global id of a User or a Configuration.' }),
    period: t.field({ type: BudgetPeriodEnum, required: true }),
    maxRequests: t.int({ description: 'Provider calls per period; 0 or null = unlimited.' }),
    maxTokens: t.int({ description: 'Tokens per period; 0 or null = unlimited.' }),
    maxCost: t.float({ description: 'Cost per period in the currency of model prices; 0 or null = unlimited.' }),
  }),
});

/** Which subject a global id names; anything else cannot carry a budget. */
function budgetSubject(globalId: string): { scope: BudgetScope; id: string } {
  const decoded = decodeGlobalId(globalId);
  const scope = decoded && SCOPE_OF_TYPENAME[decoded.typename];
  if (decoded && scope) return { scope, id: decoded.id };
  throw new ValidationError('Invalid input: subjectId: must be the id of a User or a Configuration', [
    { path: ['input', 'subjectId'], message: 'must be the id of a User or a Configuration' },
  ]);
}

builder.queryFields((t) => ({
  budgets: t.field({
    type: [BudgetRef],
    authScopes: { admin: true },
    resolve: (_root, _args, context) => listBudgets(context.db),
  }),
}));

builder.mutationFields((t) => ({
  setBudget: t.field({
    type: BudgetRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: { input: t.arg({ type: SetBudgetInput, required: true }) },
    resolve: (_root, { input }, context) => setBudget(context.db, budgetSubject(String(input.subjectId)), input),
  }),
}));

import type { BudgetRow, BudgetScope, Db } from '../database.ts';

export interface UsageTotals {
  readonly requests: number;
  readonly tokens: number;
  readonly cost: number;
}

/**
 * The recorded usage of one subject since `since`, as one row (zeros when nothing was recorded):
 * provider calls, tokens (prompt + completion) and cost. Token columns are bigint, and sums of
 * bigint are numeric, so no total overflows.
 */
export function usageSince(db: Db, subject: { scope: BudgetScope; id: string }, since: Date) {
  const column = subject.scope === 'USER' ? 'user_id' : 'configuration_id';
  return db
    .selectFrom('usage_records')
    .select((eb) => [
      eb.fn.countAll<string | number>().as('requests'),
      eb.fn.coalesce(eb.fn.sum<string | number>(eb('prompt_tokens', '+', eb.ref('completion_tokens'))), eb.lit(0)).as('tokens'),
      eb.fn.coalesce(eb.fn.sum<string | number>('cost'), eb.lit(0)).as('cost'),
    ])
    .where(column, '=', subject.id)
    .where('created_at', '>=', since);
}

/** Provider calls, tokens and cost of one subject since `since` (what the usage records hold). */
export async function sumUsageSince(db: Db, subject: { scope: BudgetScope; id: string }, since: Date): Promise<UsageTotals> {
  const row = await usageSince(db, subject, since).executeTakeFirstOrThrow();
  return { requests: Number(row.requests), tokens: Number(row.tokens), cost: Number(row.cost) };
}

export async function findBudgetsOf(db: Db, userId: string | null, configurationId: string): Promise<BudgetRow[]> {
  return db
    .selectFrom('budgets')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([eb('scope', '=', 'CONFIGURATION'), eb('subject_id', '=', configurationId)]),
        ...(userId ? [eb.and([eb('scope', '=', 'USER'), eb('subject_id', '=', userId)])] : []),
      ]),
    )
    .execute();
}

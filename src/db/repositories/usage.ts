import type { BudgetRow, BudgetScope, Db } from '../database.ts';

export interface UsageTotals {
  readonly requests: number;
  readonly tokens: number;
  readonly cost: number;
}

/** Provider calls, tokens and cost of one subject since `since`. */
export async function sumUsageSince(db: Db, subject: { scope: BudgetScope; id: string }, since: Date): Promise<UsageTotals> {
  const column = subject.scope === 'USER' ? 'user_id' : 'configuration_id';
  const row = await db
    .selectFrom('usage_records')
    .select((eb) => [
      eb.fn.countAll<string | number>().as('requests'),
      eb.fn.coalesce(eb.fn.sum<string | number>(eb('prompt_tokens', '+', eb.ref('completion_tokens'))), eb.lit(0)).as('tokens'),
      eb.fn.coalesce(eb.fn.sum<string | number>('cost'), eb.lit(0)).as('cost'),
    ])
    .where(column, '=', subject.id)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
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

export async function insertUsageRecord(
  db: Db,
  record: { id: string; userId: string | null; configurationId: string; runId: string; modelId: string; promptTokens: number; completionTokens: number; cost: number },
): Promise<void> {
  await db
    .insertInto('usage_records')
    .values({
      id: record.id,
      user_id: record.userId,
      configuration_id: record.configurationId,
      run_id: record.runId,
      model_id: record.modelId,
      prompt_tokens: record.promptTokens,
      completion_tokens: record.completionTokens,
      cost: record.cost,
    })
    .execute();
}


import { sql } from 'kysely';
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

/** What usage can be grouped by (GraphQL `UsageGroupBy`); DAY is the UTC calendar day. */
export const USAGE_DIMENSIONS = ['USER', 'CONFIGURATION', 'MODEL', 'DAY'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/** One group of usage records. A field is null when usage is not grouped by it, or when its subject no longer exists. */
export interface UsageGroupRow {
  readonly userId: string | null;
  readonly configurationId: string | null;
  readonly modelId: string | null;
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string | null;
  readonly requests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cost: number;
}

export interface UsageQuery {
  /** Inclusive. */
  readonly from: Date;
  /** Exclusive. */
  readonly to: Date;
  /** Only this user's records; null for everyone's. */
  readonly userId: string | null;
  readonly groupBy: readonly UsageDimension[];
  readonly limit: number;
}

/**
 * Provider calls, tokens and cost of the usage records created in [from, to), per group: ordered by
 * day, then by cost (highest first), then by ids, at most `limit` groups.
 *
 * The subjects are LEFT JOINed and grouped by the joined id, so a user, configuration or model
 * deleted since (a user's records keep a null id, the others a dangling one) falls into ONE group
 * whose field is null. A join whose columns are not used is removed by the planner, so only the
 * grouped subjects cost a join.
 */
const groupedSubject = (grouped: boolean, column: string) => (grouped ? sql<string | null>`${sql.ref(column)}` : sql<string | null>`null::uuid`);

export function usageSummaryQuery(db: Db, query: UsageQuery) {
  const grouped = new Set(query.groupBy);
  const day = sql<string>`to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD')`;
  let select = db
    .selectFrom('usage_records as r')
    .leftJoin('users as u', 'u.id', 'r.user_id')
    .leftJoin('configurations as c', 'c.id', 'r.configuration_id')
    .leftJoin('models as m', 'm.id', 'r.model_id')
    .select((eb) => [
      groupedSubject(grouped.has('USER'), 'u.id').as('user_id'),
      groupedSubject(grouped.has('CONFIGURATION'), 'c.id').as('configuration_id'),
      groupedSubject(grouped.has('MODEL'), 'm.id').as('model_id'),
      (grouped.has('DAY') ? day : sql<string | null>`null::text`).as('day'),
      eb.fn.countAll<string | number>().as('requests'),
      eb.fn.coalesce(eb.fn.sum<string | number>('r.prompt_tokens'), eb.lit(0)).as('prompt_tokens'),
      eb.fn.coalesce(eb.fn.sum<string | number>('r.completion_tokens'), eb.lit(0)).as('completion_tokens'),
      eb.fn.coalesce(eb.fn.sum<string | number>('r.cost'), eb.lit(0)).as('cost'),
    ])
    .where('r.created_at', '>=', query.from)
    .where('r.created_at', '<', query.to);
  if (query.userId !== null) select = select.where('r.user_id', '=', query.userId);
  if (grouped.has('USER')) select = select.groupBy('u.id');
  if (grouped.has('CONFIGURATION')) select = select.groupBy('c.id');
  if (grouped.has('MODEL')) select = select.groupBy('m.id');
  if (grouped.has('DAY')) select = select.groupBy(day);
  return select
    .orderBy('day')
    .orderBy('cost', 'desc')
    .orderBy('user_id')
    .orderBy('configuration_id')
    .orderBy('model_id')
    .limit(query.limit);
}

export async function summarizeUsage(db: Db, query: UsageQuery): Promise<UsageGroupRow[]> {
  const rows = await usageSummaryQuery(db, query).execute();
  return rows.map((row) => ({
    userId: row.user_id,
    configurationId: row.configuration_id,
    modelId: row.model_id,
    day: row.day,
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cost: Number(row.cost),
  }));
}

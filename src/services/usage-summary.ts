import { z } from 'zod';
import type { Db } from '../db/database.ts';
import { summarizeUsage, USAGE_DIMENSIONS, type UsageDimension, type UsageGroupRow } from '../db/repositories/usage.ts';
import { ValidationError } from '../errors.ts';
import type { Actor } from '../tools/tool.ts';
import { parseInput } from './validate.ts';

export { USAGE_DIMENSIONS, type UsageDimension, type UsageGroupRow };

/**
 * The bounds of one summary (documented in docs/dashboard.md): a range of at most MAX_USAGE_RANGE_DAYS
 * days, and at most MAX_USAGE_GROUPS groups. A summary that would hold more groups is REFUSED,
 * not truncated (a total that silently leaves groups out reads as a smaller bill): the client
 * narrows the range or groups by fewer fields.
 */
export const MAX_USAGE_RANGE_DAYS = 366;
export const MAX_USAGE_GROUPS = 500;

const DAY_MS = 86_400_000;

const schema = z
  .object({
    from: z.date(),
    to: z.date(),
    groupBy: z.array(z.enum(USAGE_DIMENSIONS)).refine((dimensions) => new Set(dimensions).size === dimensions.length, 'must not name a field twice'),
  })
  .refine((input) => input.from < input.to, { message: 'must be after from', path: ['to'] })
  .refine((input) => input.to.getTime() - input.from.getTime() <= MAX_USAGE_RANGE_DAYS * DAY_MS, {
    message: `must be at most ${MAX_USAGE_RANGE_DAYS} days after from: ask for a shorter range`,
    path: ['to'],
  });

/**
 * Provider calls, tokens and cost from the usage records created in [from, to), per group of the
 * `groupBy` fields (none: one total row, zeros when nothing was recorded). A non-admin sees their
 * own usage only; an admin everyone's.
 */
export async function usageSummary(db: Db, viewer: Actor, input: unknown): Promise<UsageGroupRow[]> {
  const { from, to, groupBy } = parseInput(schema, input);
  const rows = await summarizeUsage(db, { from, to, groupBy, userId: viewer.isAdmin ? null : viewer.id, limit: MAX_USAGE_GROUPS + 1 });
  if (rows.length > MAX_USAGE_GROUPS) {
    throw new ValidationError(
      `Invalid input: groupBy: the summary would hold more than ${MAX_USAGE_GROUPS} groups: ask for a shorter range (from/to) or group by fewer fields`,
      [{ path: ['groupBy'], message: `the summary would hold more than ${MAX_USAGE_GROUPS} groups: ask for a shorter range or group by fewer fields` }],
    );
  }
  return rows;
}

/**
 * The most groups a summary can hold, from its arguments alone (for the query cost): one row
 * without groupBy; by DAY alone, the UTC days the range touches; otherwise MAX_USAGE_GROUPS.
 * Arguments that do not parse get the maximum (the summary refuses them anyway).
 */
export function usageGroupsBound(input: { from?: unknown; to?: unknown; groupBy?: unknown }): number {
  const groupBy = Array.isArray(input.groupBy) ? input.groupBy : null;
  if (groupBy === null) return MAX_USAGE_GROUPS;
  if (groupBy.length === 0) return 1;
  if (groupBy.length > 1 || groupBy[0] !== 'DAY') return MAX_USAGE_GROUPS;
  const from = new Date(input.from as string | Date).getTime();
  const to = new Date(input.to as string | Date).getTime();
  if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from) return MAX_USAGE_GROUPS;
  const days = Math.floor((to - 1) / DAY_MS) - Math.floor(from / DAY_MS) + 1;
  return Math.min(days, MAX_USAGE_GROUPS);
}

// The usage chart's range as UTC calendar days ('YYYY-MM-DD'), the days the API groups usage by
// (usageSummary's DAY is the UTC day of created_at). Every day of a range is a bar and a table
// row, with or without usage, so the chart's x-axis is the range asked for, not the data found.
import type { ConsoleUsageByDayQuery } from '../gql/graphql.ts';

export type UsageRow = ConsoleUsageByDayQuery['usageSummary'][number];

/** Both ends included. */
export interface DayRange {
  readonly from: string;
  readonly to: string;
}

/** The API refuses a summary over more than 366 days (MAX_USAGE_RANGE_DAYS). */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The UTC day of an instant. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Midnight UTC of a day, in ms; NaN for a string that is not a real day ('2026-02-30' included). */
function dayStart(day: string): number {
  if (!DAY.test(day)) return NaN;
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isFinite(ms) && utcDay(new Date(ms)) === day ? ms : NaN;
}

export function addDays(day: string, days: number): string {
  return utcDay(new Date(dayStart(day) + days * DAY_MS));
}

/** The last `count` UTC days, today (UTC) the last of them. */
export function lastDays(count: number, now: Date = new Date()): DayRange {
  const to = utcDay(now);
  return { from: addDays(to, 1 - count), to };
}

/** What is wrong with a range, by end (a field's message), or null when it can be asked for. */
export function rangeProblems(range: DayRange): { from?: string; to?: string } | null {
  const from = dayStart(range.from);
  const to = dayStart(range.to);
  const problems: { from?: string; to?: string } = {};
  if (Number.isNaN(from)) problems.from = 'Enter a date (year-month-day).';
  if (Number.isNaN(to)) problems.to = 'Enter a date (year-month-day).';
  else if (!Number.isNaN(from) && to < from) problems.to = 'Must be on or after From.';
  else if (!Number.isNaN(from) && (to - from) / DAY_MS + 1 > MAX_RANGE_DAYS) problems.to = `At most ${MAX_RANGE_DAYS} days after From: choose a shorter range.`;
  return Object.keys(problems).length > 0 ? problems : null;
}

/** Every day of a valid range, in order. */
export function daysOf(range: DayRange): string[] {
  const days: string[] = [];
  for (let day = range.from; day <= range.to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The usageSummary variables of a range: [first midnight, the midnight after the last day). */
export function summaryBounds(range: DayRange): { from: string; to: string } {
  return { from: `${range.from}T00:00:00.000Z`, to: `${addDays(range.to, 1)}T00:00:00.000Z` };
}

/** One row per day of the range: the API's row for that day, or zeros (no usage recorded that day). */
export function rowsByDay(days: readonly string[], rows: readonly UsageRow[]): UsageRow[] {
  const found = new Map(rows.map((row) => [row.day, row]));
  return days.map((day) => found.get(day) ?? { day, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 });
}

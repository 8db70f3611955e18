import { sql, type SelectQueryBuilder } from 'kysely';
import type { RunKind, RunStatus } from '../../runtime/run.ts';
import type { Database, Db, RunRow } from '../database.ts';

/** The runs list (`runs` and its `totalCount`): which runs a filter matches, one keyset page at a time. */

/**
 * One page of a keyset-paginated list, as `resolveCursorConnection` asks for it: rows strictly
 * between `after` and `before` in the list's order, at most `limit`, read from the far end
 * (`before` backwards) when `inverted`, in which case the caller reverses them.
 */
export interface KeysetPage<Key> {
  readonly after: Key | null;
  readonly before: Key | null;
  readonly limit: number;
  readonly inverted: boolean;
}

/**
 * Where a page of runs starts: the id of a run on the previous page. Its (created_at, id) is read
 * in SQL: a timestamp carried in a cursor would lose PostgreSQL's microseconds, and the keyset
 * would then repeat or skip runs created within the same millisecond.
 */
export interface RunKey {
  readonly id: string;
}

/** Which runs a list shows (raw ids); empty lists and nulls leave a field open. See services/run-filter.ts. */
export interface RunFilter {
  readonly configurationId: string | null;
  readonly userId: string | null;
  /** AGENT or MCP runs only; null = both. */
  readonly kind: RunKind | null;
  readonly status: readonly RunStatus[];
  readonly terminationReason: readonly string[];
  /** Inclusive. */
  readonly createdFrom: Date | null;
  /** Exclusive. */
  readonly createdTo: Date | null;
}

function filtered<Q extends SelectQueryBuilder<Database, 'runs', any>>(query: Q, filter: RunFilter): Q {
  let q: SelectQueryBuilder<Database, 'runs', any> = query;
  if (filter.configurationId !== null) q = q.where('configuration_id', '=', filter.configurationId);
  if (filter.userId !== null) q = q.where('user_id', '=', filter.userId);
  if (filter.kind !== null) q = q.where('kind', '=', filter.kind);
  if (filter.status.length > 0) q = q.where('status', 'in', [...filter.status]);
  if (filter.terminationReason.length > 0) q = q.where('termination_reason', 'in', [...filter.terminationReason]);
  if (filter.createdFrom !== null) q = q.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo !== null) q = q.where('created_at', '<', filter.createdTo);
  return q as Q;
}

/**
 * Newest first, keyset-paginated on (created_at, id) so pages stay stable while runs are added:
 * `after` is an older bound, `before` a newer one. The bound is a row comparison, which the
 * (…, created_at, id) indexes take as an index condition: a page deep in the list starts where
 * its cursor is instead of filtering every newer run (bench/bin/explain.ts).
 */
export async function listRuns(db: Db, options: { filter: RunFilter } & KeysetPage<RunKey>): Promise<RunRow[]> {
  return listRunsQuery(db, options).execute();
}

/** The statement `listRuns` runs (bench/bin/explain.ts EXPLAINs it). */
export function listRunsQuery(db: Db, options: { filter: RunFilter } & KeysetPage<RunKey>) {
  let query = filtered(db.selectFrom('runs').selectAll(), options.filter);
  const keyOf = (id: string) => sql`(select k.created_at, k.id from runs k where k.id = ${id})`;
  if (options.after !== null) query = query.where(sql<boolean>`(runs.created_at, runs.id) < ${keyOf(options.after.id)}`);
  if (options.before !== null) query = query.where(sql<boolean>`(runs.created_at, runs.id) > ${keyOf(options.before.id)}`);
  const direction = options.inverted ? 'asc' : 'desc';
  return query.orderBy('created_at', direction).orderBy('id', direction).limit(options.limit);
}

/** How many runs the filter matches (a list's `totalCount`). */
export async function countRuns(db: Db, filter: RunFilter): Promise<number> {
  const row = await countRunsQuery(db, filter).executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The statement `countRuns` runs (bench/bin/explain.ts EXPLAINs it). */
export function countRunsQuery(db: Db, filter: RunFilter) {
  return filtered(db.selectFrom('runs'), filter).select((eb) => eb.fn.countAll<number>().as('count'));
}

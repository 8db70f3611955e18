import { sql } from 'kysely';
import type { BudgetCounterRow, BudgetRow, Db, StoredReservation } from '../database.ts';
import { usageSince } from './usage.ts';

/** One budget's counter for one period. */
export interface CounterKey {
  readonly budgetId: string;
  readonly periodStart: Date;
}

/** A counter as locked for a check, with its budget's CURRENT limits (a changed limit applies at once). */
export type LockedCounter = BudgetCounterRow & Pick<BudgetRow, 'scope' | 'period' | 'max_requests' | 'max_tokens' | 'max_cost'>;

/** `(budget_id, period_start) in (…)` over the given table or alias. */
function matching(keys: readonly CounterKey[], table = 'budget_counters') {
  const tuples = sql.join(keys.map((key) => sql`(${key.budgetId}::uuid, ${key.periodStart}::timestamptz)`));
  return sql<boolean>`(${sql.ref(`${table}.budget_id`)}, ${sql.ref(`${table}.period_start`)}) in (${tuples})`;
}

/** The keys (of those given) whose counter exists. */
export async function existingCounters(db: Db, keys: readonly CounterKey[]): Promise<CounterKey[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('budget_counters').select(['budget_id', 'period_start']).where(matching(keys)).execute();
  return rows.map((row) => ({ budgetId: row.budget_id, periodStart: new Date(row.period_start) }));
}

/**
 * Creates a budget's counter for a period, holding the usage already recorded in that period
 * (so a budget set mid-period counts what was spent before it), unless it exists; removes the
 * budget's counters of earlier periods. Nothing happens for a budget that no longer exists.
 */
export async function seedCounter(db: Db, budget: Pick<BudgetRow, 'id' | 'scope' | 'subject_id'>, periodStart: Date): Promise<void> {
  try {
    await db
      .insertInto('budget_counters')
      .columns(['budget_id', 'period_start', 'requests', 'tokens', 'cost'])
      .expression(
        db
          .selectFrom(usageSince(db, { scope: budget.scope, id: budget.subject_id }, periodStart).as('u'))
          .select([sql<string>`${budget.id}::uuid`.as('budget_id'), sql<Date>`${periodStart}::timestamptz`.as('period_start'), 'u.requests', 'u.tokens', 'u.cost'])
          .where(({ exists, selectFrom, lit }) => exists(selectFrom('budgets').select(lit(1).as('one')).where('budgets.id', '=', budget.id))),
      )
      .onConflict((oc) => oc.columns(['budget_id', 'period_start']).doNothing())
      .execute();
  } catch (error) {
    // The budget was deleted between the check and the insert: there is nothing to count against.
    if ((error as { code?: unknown }).code === '23503') return;
    throw error;
  }
  await db.deleteFrom('budget_counters').where('budget_id', '=', budget.id).where('period_start', '<', periodStart).execute();
}

/**
 * Reserves one provider call of `plannedCost` against every counter given, or none of them: in
 * ONE transaction the counters are locked (in a fixed order), `allows` decides on what they hold
 * now, and only then is each incremented (requests + 1, cost + plannedCost). Concurrent
 * reservations on any number of connections wait for each other's row locks, so each decides on
 * totals that include every reservation before it. A counter whose budget was deleted meanwhile
 * is simply absent from what `allows` sees. Returns whether the call was reserved.
 */
export async function reserveOnCounters(
  db: Db,
  keys: readonly CounterKey[],
  plannedCost: number,
  allows: (locked: readonly LockedCounter[]) => boolean,
  /** The run whose call this is: the reservation is written on its row in the same transaction. */
  holder?: { readonly runId: string; readonly reservationId: string },
): Promise<{ reserved: boolean; heldByRun: boolean }> {
  if (keys.length === 0) return { reserved: allows([]), heldByRun: false };
  return db.transaction().execute(async (trx) => {
    const locked = await trx
      .selectFrom('budget_counters as c')
      .innerJoin('budgets as b', 'b.id', 'c.budget_id')
      .selectAll('c')
      .select(['b.scope', 'b.period', 'b.max_requests', 'b.max_tokens', 'b.max_cost'])
      .where(matching(keys, 'c'))
      .orderBy('c.budget_id')
      .orderBy('c.period_start')
      .forUpdate('c')
      .execute();
    if (!allows(locked)) return { reserved: false, heldByRun: false };
    if (locked.length === 0) return { reserved: true, heldByRun: false };
    await trx
      .updateTable('budget_counters')
      .set((eb) => ({ requests: eb('requests', '+', 1), cost: eb('cost', '+', plannedCost) }))
      .where(matching(keys))
      .execute();
    if (!holder) return { reserved: true, heldByRun: false };
    const stored: StoredReservation = {
      id: holder.reservationId,
      keys: keys.map((key) => ({ budgetId: key.budgetId, periodStart: key.periodStart.toISOString() })),
      plannedCost,
    };
    const held = await trx.updateTable('runs').set({ budget_reservation: JSON.stringify(stored) }).where('id', '=', holder.runId).executeTakeFirst();
    return { reserved: true, heldByRun: held.numUpdatedRows > 0n };
  });
}

const keysOf = (stored: StoredReservation): CounterKey[] => stored.keys.map((key) => ({ budgetId: key.budgetId, periodStart: new Date(key.periodStart) }));

/** Takes the reservation a run's row holds (cleared, under the row's lock, in `trx`); null when none, or another than `id`. */
async function takeHeldReservation(trx: Db, runId: string, id?: string): Promise<StoredReservation | null> {
  const row = await trx.selectFrom('runs').select('budget_reservation').where('id', '=', runId).forUpdate().executeTakeFirst();
  const held = row?.budget_reservation as StoredReservation | string | null | undefined;
  const reservation = typeof held === 'string' ? (JSON.parse(held) as StoredReservation) : (held ?? null);
  if (!reservation || (id !== undefined && reservation.id !== id)) return null;
  await trx.updateTable('runs').set({ budget_reservation: null }).where('id', '=', runId).execute();
  return reservation;
}

/**
 * Ends a reservation a run holds on its row: if the row still holds it, its planned cost is
 * replaced by `usage` (the answered call's; none = given back), in one transaction; if not (a
 * process that took the run over gave it back already), only `usage` is added.
 */
export async function endHeldReservation(
  db: Db,
  runId: string,
  reservation: { readonly id: string; readonly keys: readonly CounterKey[] },
  usage: { readonly tokens: number; readonly cost: number } = { tokens: 0, cost: 0 },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const held = await takeHeldReservation(trx, runId, reservation.id);
    await addToCounters(trx, reservation.keys, { tokens: usage.tokens, cost: usage.cost - (held?.plannedCost ?? 0) });
  });
}

/**
 * Gives back the planned cost of the call a run's previous process had in flight when it died
 * (the run's row still holds its reservation): once, whoever calls it, since the row is cleared in
 * the same transaction. The call's request stays counted (it may have reached the provider).
 */
export async function releaseAbandonedReservation(db: Db, runId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const held = await takeHeldReservation(trx, runId);
    if (held) await addToCounters(trx, keysOf(held), { tokens: 0, cost: -held.plannedCost });
    return held !== null;
  });
}

/**
 * Adds to the counters in ONE statement, locking them in the fixed order first (a CTE), so it
 * never deadlocks with a reservation holding some of them. Used to replace a reservation's
 * planned cost with the real usage of the answered call, or to release the planned cost of a call
 * that was never answered. A counter that no longer exists (pruned, or its budget deleted) is skipped.
 */
export async function addToCounters(db: Db, keys: readonly CounterKey[], delta: { readonly tokens: number; readonly cost: number }): Promise<void> {
  if (keys.length === 0) return;
  await db
    .with('locked', (qb) =>
      qb
        .selectFrom('budget_counters')
        .select(['budget_id', 'period_start'])
        .where(matching(keys))
        .orderBy('budget_id')
        .orderBy('period_start')
        .forUpdate(),
    )
    .updateTable('budget_counters as c')
    .from('locked')
    .set((eb) => ({ tokens: eb('c.tokens', '+', delta.tokens), cost: eb('c.cost', '+', delta.cost) }))
    .whereRef('c.budget_id', '=', 'locked.budget_id')
    .whereRef('c.period_start', '=', 'locked.period_start')
    .execute();
}

/** One budget's counter for one period, if it was created. */
export async function findCounter(db: Db, key: CounterKey): Promise<BudgetCounterRow | undefined> {
  return db.selectFrom('budget_counters').selectAll().where('budget_id', '=', key.budgetId).where('period_start', '=', key.periodStart).executeTakeFirst();
}

import { randomUUID } from 'node:crypto';
import type { BudgetRow, Db } from '../db/database.ts';
import type { RunWriter } from '../db/run-batch-writer.ts';
import { addToCounters, endHeldReservation, existingCounters, reserveOnCounters, seedCounter, type CounterKey, type LockedCounter } from '../db/repositories/budget-counters.ts';
import { findBudgetsOf } from '../db/repositories/usage.ts';
import { checkBudgets, periodStart, type ApplicableBudget, type BudgetDenial } from '../runtime/budget.ts';
import type { Logger } from '../logger.ts';
import type { BudgetGuard } from '../runtime/loop-session.ts';

export interface BudgetSubject {
  readonly userId: string | null;
  readonly configurationId: string;
  readonly modelId: string;
  readonly runId: string;
}

/**
 * Budgets and usage of ONE run over the database.
 *
 * A pre-flight is a RESERVATION, atomic in the database, so that concurrent runs cannot all pass
 * the same check: every budget has one counter row per period (`budget_counters`: requests,
 * tokens, cost), and a pre-flight locks the counters of every budget that applies, checks them
 * with the design's rule (`checkBudgets`: deny if requests + 1 > max, tokens > max, or
 * cost + plannedCost > max), and only if ALL allow adds one request and the planned cost to each,
 * in one transaction; a denial changes nothing. Row locks (taken in one fixed order) serialise
 * concurrent pre-flights on PostgreSQL; PGlite runs one transaction at a time anyway. So:
 * - N concurrent runs never exceed `maxRequests`;
 * - `maxCost` is exceeded by at most what the calls in flight cost beyond their planned cost, and
 *   `maxTokens` by at most the tokens of the calls in flight (tokens are not known in advance).
 *
 * The counters and the usage records:
 * - usage records stay the record of what was spent (one row per answered call, through the
 *   shared group-commit writer); the counter is the enforcement. A counter is created at the first
 *   pre-flight of its period, seeded from the usage records of that period (so a budget set
 *   mid-period counts what was spent before it; a new period starts a new row).
 * - after the call, `record` replaces the planned cost with the real cost and adds the real
 *   tokens (one statement, at once, not through the writer, so that the next pre-flight of any
 *   run sees it).
 * - a call that never answered (provider failure, cancellation) keeps its request in the counter
 *   (a request that reached the provider counts: it may be billed) and gives its planned cost
 *   back; it has no usage record, so the counter may count more requests than the usage records.
 *   The reservation is also written on the run's row (same transaction): when a process dies
 *   mid-call, the process that takes the run over gives that planned cost back once before the
 *   call is made again (durable runs), so the call is counted once; its request stays counted.
 *
 * Which budgets and limits apply:
 * - the budgets of the run (user and configuration, day and month) are read once per run (with
 *   its setup): a budget CREATED while a run is going applies from the next run. Their limits are
 *   read at every pre-flight, under the lock: a budget CHANGED mid-period applies at once.
 *   Without budgets, a pre-flight costs no query.
 * - `record` queues the usage row on the shared writer and returns; a pre-flight under budgets
 *   waits for it and for the counter correction. A usage row or correction that could not be
 *   stored is logged and fails the run at the next pre-flight (at most one call later):
 *   unrecorded spending must not go on.
 */
export interface RunBudgetGuard extends BudgetGuard {
  /**
   * Resolves once every usage row recorded so far is stored (or was logged as lost), and gives
   * back the planned cost of a call that was reserved but never answered; never throws.
   */
  flushed(): Promise<void>;
}

function applicable(counter: LockedCounter): ApplicableBudget {
  return {
    scope: counter.scope,
    period: counter.period,
    limits: { maxRequests: Number(counter.max_requests), maxTokens: Number(counter.max_tokens), maxCost: Number(counter.max_cost) },
    spent: { requests: Number(counter.requests), tokens: Number(counter.tokens), cost: Number(counter.cost) },
  };
}

const keyName = (key: CounterKey) => `${key.budgetId}@${key.periodStart.toISOString()}`;

export function createBudgetGuard(
  storage: { readonly db: Db; readonly writer: RunWriter; readonly logger: Pick<Logger, 'error'> },
  subject: BudgetSubject,
  options: { readonly budgets?: readonly BudgetRow[]; readonly now?: () => Date } = {},
): RunBudgetGuard {
  const { db, writer, logger } = storage;
  const now = options.now ?? (() => new Date());
  let budgets: Promise<readonly BudgetRow[]> | null = options.budgets ? Promise.resolve(options.budgets) : null;
  let recorded: Promise<void> = Promise.resolve();
  let corrected: Promise<void> = Promise.resolve();
  let recordFailure: { error: unknown } | null = null;
  /**
   * The reservation of the call in flight: corrected by `record`, or released. `held`: it is on the
   * run's row too (a run that has one), so it is ended there, once, whoever ends it.
   */
  let reserved: { readonly id: string; readonly keys: CounterKey[]; readonly plannedCost: number; readonly held: boolean } | null = null;
  /** Replaces the reservation's planned cost with `usage` (none: gives it back). */
  const end = (reservation: NonNullable<typeof reserved>, usage?: { tokens: number; cost: number }) =>
    reservation.held
      ? endHeldReservation(db, subject.runId, reservation, usage)
      : addToCounters(db, reservation.keys, { tokens: usage?.tokens ?? 0, cost: (usage?.cost ?? 0) - reservation.plannedCost });
  /** Counters this run knows exist (checked, or seeded), so each is looked for once. */
  const known = new Set<string>();

  const throwIfUnrecorded = () => {
    if (recordFailure) throw recordFailure.error;
  };

  /** Gives back the planned cost of a reserved call that never answered; its request stays counted. */
  const release = async () => {
    const reservation = reserved;
    reserved = null;
    if (!reservation) return;
    await end(reservation);
  };

  /** Creates the counters of this period that do not exist yet, from the period's usage records. */
  const ensureCounters = async (rows: readonly BudgetRow[], keys: readonly CounterKey[]) => {
    const unknown = keys.filter((key) => !known.has(keyName(key)));
    if (unknown.length === 0) return;
    const existing = new Set((await existingCounters(db, unknown)).map(keyName));
    await Promise.all(
      unknown.map(async (key) => {
        if (!existing.has(keyName(key))) await seedCounter(db, rows.find((row) => row.id === key.budgetId)!, key.periodStart);
        known.add(keyName(key));
      }),
    );
  };

  return {
    async preflight(plannedCost) {
      throwIfUnrecorded();
      budgets ??= findBudgetsOf(db, subject.userId, subject.configurationId);
      const rows = await budgets;
      if (rows.length === 0) return null;
      // This run's last call is corrected (and its usage row stored) before the next check.
      writer.expedite();
      await Promise.all([recorded, corrected]);
      throwIfUnrecorded();
      await release();
      const at = now();
      const keys = rows.map((budget) => ({ budgetId: budget.id, periodStart: periodStart(budget.period, at) }));
      await ensureCounters(rows, keys);
      const decision: { denial: BudgetDenial | null } = { denial: null };
      const id = randomUUID();
      const outcome = await reserveOnCounters(
        db,
        keys,
        plannedCost,
        (locked) => {
          decision.denial = checkBudgets(locked.map(applicable), plannedCost);
          return decision.denial === null;
        },
        { runId: subject.runId, reservationId: id },
      );
      if (outcome.reserved) reserved = { id, keys, plannedCost, held: outcome.heldByRun };
      return decision.denial;
    },
    async record(usage) {
      recorded = writer
        .insertUsage({
          id: randomUUID(),
          userId: subject.userId,
          configurationId: subject.configurationId,
          runId: subject.runId,
          modelId: subject.modelId,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          cost: usage.cost,
        })
        .catch((error: unknown) => {
          logger.error({ err: error, runId: subject.runId }, 'could not record the usage of a provider call; the run stops before its next call');
          recordFailure = { error };
        });
      const reservation = reserved;
      reserved = null;
      if (!reservation) return;
      corrected = end(reservation, { tokens: usage.promptTokens + usage.completionTokens, cost: usage.cost }).catch((error: unknown) => {
        logger.error({ err: error, runId: subject.runId }, 'could not count the usage of a provider call against its budgets; the run stops before its next call');
        recordFailure = { error };
      });
    },
    flushed: async () => {
      writer.expedite();
      await Promise.all([recorded, corrected]);
      await release().catch((error: unknown) =>
        logger.error({ err: error, runId: subject.runId }, 'could not give back the planned cost of an unanswered provider call; it stays reserved until the period ends'),
      );
    },
  };
}

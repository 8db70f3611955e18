import { sql } from 'kysely';
import type { Db, RunRow } from '../database.ts';
import { onlyUuids } from '../errors.ts';
import { releaseAbandonedReservation } from './budget-counters.ts';
import { interruptedColumns, ownerGone } from './run-settlement.ts';
import { leaseExpiry } from './runs.ts';

/**
 * The leases of durable runs (migration 20261202160000): who drives a RUNNING agent run, under
 * which epoch, until when. Every write here names the epoch it expects; a process whose run was
 * taken over finds out by a write that changes nothing (or a step the trigger refuses).
 */

export interface HeldLease {
  readonly runId: string;
  readonly epoch: number;
}

/** The SQLSTATE of a step refused because its run's lease moved on (the trigger of the migration). */
export const LEASE_MOVED_ON = 'AR001';

/**
 * Renews the leases this process holds. Returns the runs whose cancellation was asked for
 * elsewhere, and the runs it no longer holds (taken over after a pause, or settled elsewhere):
 * their loops must stop writing.
 */
export async function renewLeases(db: Db, owner: string, held: readonly HeldLease[], leaseMs: number): Promise<{ cancelled: string[]; lost: string[] }> {
  const valid = held.filter((lease) => onlyUuids([lease.runId]).length === 1);
  if (valid.length === 0) return { cancelled: [], lost: [] };
  const pairs = sql.join(valid.map((lease) => sql`(${lease.runId}::uuid, ${lease.epoch}::integer)`));
  const rows = await db
    .updateTable('runs')
    .set({ heartbeat_at: sql`now()`, lease_expires_at: leaseExpiry(leaseMs / 1000) })
    .where('status', '=', 'RUNNING')
    .where('lease_owner', '=', owner)
    .where(sql<boolean>`(id, lease_epoch) in (${pairs})`)
    .returning(['id', 'cancel_requested_at'])
    .execute();
  const renewed = new Set(rows.map((row) => row.id));
  return {
    cancelled: rows.filter((row) => row.cancel_requested_at !== null).map((row) => row.id),
    lost: valid.filter((lease) => !renewed.has(lease.runId)).map((lease) => lease.runId),
  };
}

/**
 * Claims up to `limit` RUNNING agent runs whose owner is gone — their lease lapsed, or, with
 * `everyOtherOwner` (an embedded database, which one process at a time can open), every run this
 * process does not own — for `owner`: a new epoch, a new lease, one more resume. One claim wins:
 * the rows are locked FOR UPDATE SKIP LOCKED, so concurrent claimers (and a step insert in flight,
 * which holds a KEY SHARE lock) never hand the same run to two processes. The budget reservation
 * of the call the dead process had in flight is given back (the call is made again).
 */
export async function claimOrphanedRuns(
  db: Db,
  claim: { readonly owner: string; readonly leaseMs: number; readonly limit: number; readonly everyOtherOwner?: boolean },
): Promise<(RunRow & { handed_over: boolean })[]> {
  let orphans = db
    .selectFrom('runs')
    .select(['id', 'lease_owner as previous_owner', 'lease_expires_at as previous_expiry'])
    .where('status', '=', 'RUNNING')
    .where('kind', '=', 'AGENT');
  // A process never takes over its own runs: it drives them (a renewal that came late is not a death).
  orphans = orphans.where(sql<boolean>`lease_owner is distinct from ${claim.owner}`);
  if (!claim.everyOtherOwner) orphans = orphans.where(ownerGone(claim.leaseMs));
  const claimed = await db
    .updateTable('runs')
    .from(orphans.orderBy('lease_expires_at').limit(claim.limit).forUpdate().skipLocked().as('orphan'))
    .set({
      lease_owner: claim.owner,
      lease_epoch: sql<number>`runs.lease_epoch + 1`,
      lease_expires_at: leaseExpiry(claim.leaseMs / 1000),
      heartbeat_at: sql`now()`,
      resume_count: sql<number>`runs.resume_count + 1`,
      state_version: sql<number>`runs.state_version + 1`,
    })
    .whereRef('runs.id', '=', 'orphan.id')
    .returningAll('runs')
    // A process that stopped gracefully gave its lease up (no owner, an expiry): the run was handed over.
    .returning(sql<boolean>`orphan.previous_owner is null and orphan.previous_expiry is not null`.as('handed_over'))
    .execute();
  // The call the dead process had in flight is made again: its planned cost is given back first, once.
  for (const run of claimed) if (run.budget_reservation !== null) await releaseAbandonedReservation(db, run.id);
  return claimed.map((run) => ({ ...run, budget_reservation: null }));
}

/** Gives the lease up now (a process handing its run over): any instance may claim it at once. */
export async function releaseLease(db: Db, lease: HeldLease): Promise<boolean> {
  const result = await db
    .updateTable('runs')
    .set({ lease_owner: null, lease_expires_at: sql`now() - interval '1 millisecond'` })
    .where('id', '=', lease.runId)
    .where('lease_epoch', '=', lease.epoch)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Stores a sealed resume point now (not with a step); false when the lease moved on. */
export async function storeCheckpoint(db: Db, lease: HeldLease, sealed: string): Promise<boolean> {
  const result = await db
    .updateTable('runs')
    .set({ checkpoint: sealed })
    .where('id', '=', lease.runId)
    .where('lease_epoch', '=', lease.epoch)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Settles INTERRUPTED a claimed run that cannot be continued (its checkpoint cannot be opened). */
export async function settleClaimedAsInterrupted(db: Db, lease: HeldLease, errorMessage: string): Promise<RunRow | undefined> {
  return db
    .updateTable('runs')
    .set(interruptedColumns(errorMessage))
    .where('id', '=', lease.runId)
    .where('lease_epoch', '=', lease.epoch)
    .where('status', '=', 'RUNNING')
    .returningAll()
    .executeTakeFirst();
}

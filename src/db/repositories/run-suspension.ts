import { sql } from 'kysely';
import type { Db, RunRow } from '../database.ts';
import { countedColumns, LEFT_RUNNING } from './run-settlement.ts';
import { leaseExpiry } from './runs.ts';

/**
 * A run parked for a human decision (WAITING_FOR_APPROVAL) and claimed back by it. Parking leaves
 * RUNNING like a settlement does (run-settlement.ts), without ending the run.
 */

/** Parks a RUNNING run: WAITING_FOR_APPROVAL with its sealed state and the digest of the turn. Undefined when it was not RUNNING. */
export async function suspendRun(
  db: Db,
  id: string,
  suspension: { sealedState: string; digest: string; iterations: number; promptTokens: number; completionTokens: number; estimatedCost: number },
  epoch: number | null = null,
): Promise<RunRow | undefined> {
  let query = db
    .updateTable('runs')
    .set({
      ...LEFT_RUNNING,
      status: 'WAITING_FOR_APPROVAL',
      suspended_state: suspension.sealedState,
      suspended_digest: suspension.digest,
      ...countedColumns(suspension),
    })
    .where('id', '=', id)
    .where('status', '=', 'RUNNING');
  if (epoch !== null) query = query.where('lease_epoch', '=', epoch);
  return query.returningAll().executeTakeFirst();
}

/**
 * Claims a waiting run for ONE decision: flips it back to RUNNING only if it is still waiting on
 * exactly this digest, so of two concurrent approvers exactly one gets the row. With `lease`, the
 * deciding process owns the resumed run from now on (a new epoch).
 */
export async function claimSuspendedRun(
  db: Db,
  id: string,
  digest: string,
  lease?: { readonly owner: string; readonly ms: number; readonly checkpoint: string | null },
): Promise<RunRow | undefined> {
  return db
    .updateTable('runs')
    .set({
      status: 'RUNNING',
      suspended_state: null,
      suspended_digest: null,
      heartbeat_at: sql`now()`,
      state_version: sql<number>`state_version + 1`,
      ...(lease
        ? { lease_owner: lease.owner, lease_epoch: sql<number>`lease_epoch + 1`, lease_expires_at: leaseExpiry(lease.ms / 1000), checkpoint: lease.checkpoint }
        : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'WAITING_FOR_APPROVAL')
    .where('suspended_digest', '=', digest)
    .returningAll()
    .executeTakeFirst();
}

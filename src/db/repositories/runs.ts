import { sql } from 'kysely';
import { SETTLED_STATUSES, type RunKind } from '../../runtime/run.ts';
import type { Db, NewRun, RunRow, RunStepRow } from '../database.ts';
import { onlyUuids } from '../errors.ts';
import { prepared } from '../prepared.ts';
import { storableJson, storableText } from '../storable-text.ts';
import type { KeysetPage } from './run-list.ts';

/**
 * A run's row and its steps: creating a run (under the cap), reading it and its steps, the flags
 * others raise on it, and purging its content. How it ends is run-settlement.ts; how it is parked
 * for a decision, run-suspension.ts; the runs list, run-list.ts; its lease, run-leases.ts.
 */

/** The columns a new run is created with; the rest take their defaults. */
export type RunStart = Required<Pick<NewRun, 'id' | 'configuration_id' | 'user_id' | 'status' | 'prompt' | 'privacy_level' | 'tool_selection'>> & {
  /** The traceparent of the span that started the run (null or absent without tracing). */
  readonly trace_parent?: string | null;
  /** Durable runs: the lease its process takes (epoch 1) and the sealed checkpoint to start again from. */
  readonly lease?: { readonly owner: string; readonly ms: number; readonly checkpoint: string | null };
};

const RUN_COLUMNS = ['id', 'configuration_id', 'user_id', 'status', 'prompt', 'privacy_level', 'tool_selection', 'kind', 'trace_parent', 'lease_owner', 'lease_epoch', 'checkpoint'] as const;

type RunValues = Omit<Required<RunStart>, 'lease'> & {
  kind: RunKind;
  lease_owner: string | null;
  lease_epoch: number;
  checkpoint: string | null;
  /** 0 without a lease (no expiry). */
  leaseSeconds: number;
};

/** When a lease taken now lapses, by the database's clock (the same for every instance); null for none. */
export const leaseExpiry = (seconds: number) =>
  sql<Date | null>`case when ${seconds}::double precision > 0 then now() + make_interval(secs => ${seconds}::double precision) end`;

const insertRunStatement = prepared([...RUN_COLUMNS, 'leaseSeconds'], (db, { leaseSeconds, ...run }: RunValues) =>
  db
    .insertInto('runs')
    .values({ ...run, lease_expires_at: leaseExpiry(leaseSeconds) })
    .returningAll(),
);

/** The values a new run is stored with: a run of the agent loop unless `kind` says otherwise. */
function newRunValues<Start extends RunStart & { kind?: RunKind }>({ lease, ...run }: Start): RunValues & Omit<Start, 'lease'> {
  return {
    ...run,
    kind: run.kind ?? 'AGENT',
    prompt: storableText(run.prompt),
    trace_parent: run.trace_parent ?? null,
    lease_owner: lease?.owner ?? null,
    lease_epoch: lease ? 1 : 0,
    checkpoint: lease?.checkpoint ?? null,
    leaseSeconds: lease ? lease.ms / 1000 : 0,
  };
}

export async function insertRun(db: Db, run: RunStart & { kind?: RunKind }): Promise<RunRow> {
  const [row] = await insertRunStatement(db, newRunValues(run));
  if (!row) throw new Error('the new run was not returned');
  return row;
}

const insertRunWithinCapStatement = prepared(
  [...RUN_COLUMNS, 'leaseSeconds', 'maxRunning'],
  (db, run: RunValues & { maxRunning: number }) =>
    db
      .insertInto('runs')
      .columns([...RUN_COLUMNS, 'lease_expires_at'])
      .expression(
        db
          .selectNoFrom((eb) => [...RUN_COLUMNS.map((column) => eb.val(run[column]).as(column)), leaseExpiry(run.leaseSeconds).as('lease_expires_at')])
          .where(sql<boolean>`airlock_running_runs_below(${run.user_id}, ${run.maxRunning})`),
      )
      .returningAll(),
);

/**
 * Creates a RUNNING run unless its user already has `maxRunning` RUNNING runs; returns undefined
 * (and stores nothing) when refused. One statement: the function `airlock_running_runs_below`
 * (migration 20261202130000) takes a transaction-scoped advisory lock on the user and counts, and
 * the insert happens only if it says yes, under that lock, so concurrent starts on any number of
 * connections (or processes) are counted one after the other: of 20 starts at once with a cap of
 * 3, exactly 3 get a row. It was a transaction of five statements (begin, lock, count, insert,
 * commit): four round trips more for every run.
 */
export async function insertRunWithinCap(db: Db, run: RunStart & { user_id: string; kind?: RunKind }, maxRunning: number): Promise<RunRow | undefined> {
  const [row] = await insertRunWithinCapStatement(db, { ...newRunValues(run), maxRunning });
  return row;
}

export async function findRunsByIds(db: Db, ids: readonly string[]): Promise<RunRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('runs').selectAll().where('id', 'in', valid).execute();
}

/** Of these runs, the ones that ended (a settled status) before `before`; the others are not read. */
export async function findRunsEndedBefore(db: Db, ids: readonly string[], before: Date): Promise<RunRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('runs').selectAll().where('id', 'in', valid).where('status', 'in', [...SETTLED_STATUSES]).where('finished_at', '<', before).execute();
}

export async function markAuditIncomplete(db: Db, id: string): Promise<void> {
  await db.updateTable('runs').set({ audit_incomplete: true }).where('id', '=', id).execute();
}

/** Records that a RUNNING run must be cancelled (by whichever process drives it); false when it is not RUNNING. */
export async function requestCancel(db: Db, runId: string): Promise<boolean> {
  const result = await db
    .updateTable('runs')
    .set({ cancel_requested_at: sql`now()` })
    .where('id', '=', runId)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Steps in sequence order between the `after` and `before` sequences (see KeysetPage). */
export async function pageRunSteps(db: Db, runId: string, page: KeysetPage<number>): Promise<RunStepRow[]> {
  let query = db.selectFrom('run_steps').selectAll().where('run_id', '=', runId);
  if (page.after !== null) query = query.where('sequence', '>', page.after);
  if (page.before !== null) query = query.where('sequence', '<', page.before);
  return query.orderBy('sequence', page.inverted ? 'desc' : 'asc').limit(page.limit).execute();
}

/** Steps in sequence order, after `afterSequence`, at most `first`. */
export function listRunSteps(db: Db, runId: string, afterSequence: number, first: number): Promise<RunStepRow[]> {
  return pageRunSteps(db, runId, { after: afterSequence, before: null, limit: first, inverted: false });
}

/** Runs created before `cutoff` whose stored content was not yet purged (and that may hold content). */
export async function findRunsToPurge(db: Db, cutoff: Date, limit: number): Promise<RunRow[]> {
  return db
    .selectFrom('runs')
    .selectAll()
    .where('created_at', '<', cutoff)
    .where('content_purged_at', 'is', null)
    .where('status', 'not in', ['RUNNING', 'WAITING_FOR_APPROVAL'])
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Rewrites a run's stored content down to metadata, in one transaction. */
export async function replaceRunContent(
  db: Db,
  runId: string,
  steps: readonly { sequence: number; payload: object }[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const step of steps) {
      await trx.updateTable('run_steps').set({ payload: storableJson(step.payload) }).where('run_id', '=', runId).where('sequence', '=', step.sequence).execute();
    }
    await trx.updateTable('runs').set({ prompt: null, final_content: null, content_purged_at: sql`now()` }).where('id', '=', runId).execute();
  });
}

export async function lastStepSequence(db: Db, runId: string): Promise<number> {
  const row = await db
    .selectFrom('run_steps')
    .select((eb) => eb.fn.max<number | null>('sequence').as('last'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return Number(row?.last ?? 0);
}

/** Runs waiting for a decision, oldest first; `userId` restricts to one initiator; `limit` bounds the list. */
export async function listWaitingRuns(db: Db, userId: string | null, limit?: number): Promise<RunRow[]> {
  let query = db.selectFrom('runs').selectAll().where('status', '=', 'WAITING_FOR_APPROVAL');
  if (userId !== null) query = query.where('user_id', '=', userId);
  query = query.orderBy('created_at').orderBy('id');
  return (limit === undefined ? query : query.limit(limit)).execute();
}

import { sql } from 'kysely';
import type { Db, RunRow } from '../database.ts';
import { onlyUuids } from '../errors.ts';
import { storableJson, storableText } from '../storable-text.ts';
import { reportedColumns, settleColumns, type Settlement } from './run-settlement.ts';
import { insertRun, type RunStart } from './runs.ts';

/**
 * An MCP session IS its run row (`kind = 'MCP'`, RUNNING while open): its id is the session id,
 * its user the only one who may use it, `last_request_at` (else `created_at`) its idle clock, and
 * two counters of migration 20261202170000 what it counts. No process holds a session, so any
 * instance serves any request, and every decision that must happen once (a step's sequence, a
 * remote call within the budget, the end) is one conditional statement here.
 */
interface McpSessionColumns {
  /** The sequence of the session's last stored step (0 before the first). */
  mcp_last_sequence: number;
  /** Remote (imported) tool calls the session made. */
  mcp_remote_calls: number;
}

const withSessionColumns = (db: Db) => db.withTables<{ runs: McpSessionColumns }>();

/** Why a session ends, and so how its run is settled. */
export const SESSION_ENDS = ['CLOSED', 'IDLE', 'CANCELLED', 'NOT_OPENED'] as const;
export type SessionEnd = (typeof SESSION_ENDS)[number];

const ENDINGS: Record<SessionEnd, { status: 'COMPLETED' | 'CANCELLED'; errorMessage: string | null }> = {
  // The client deleted it (or the session cap closed it: the user opened a newer one).
  CLOSED: { status: 'COMPLETED', errorMessage: null },
  IDLE: { status: 'COMPLETED', errorMessage: null },
  // cancelRun, or its user lost access.
  CANCELLED: { status: 'CANCELLED', errorMessage: null },
  NOT_OPENED: { status: 'CANCELLED', errorMessage: 'The MCP client did not complete the session handshake.' },
};

/** The columns a session's end writes (an MCP run calls no model: its totals stay 0; it never holds a lease). */
function endColumns(end: SessionEnd) {
  const { status, errorMessage } = ENDINGS[end];
  return settleColumns({ status, terminationReason: status, errorMessage });
}

/**
 * Lock namespace of the MCP session cap (0x41524c32), beside the run cap's 0x41524c31
 * (migration 20261202130000): a session open does not wait for agent-run starts, nor they for it.
 */
const MCP_SESSION_LOCK = 1095912498;

/**
 * Opens the run of an MCP session (RUNNING, `kind: MCP`) and, when its user then has more than
 * `maxOpen` sessions RUNNING (0 = no limit), settles the least recently used of the others with
 * `closedAs` (last request, else opening, oldest first; the new one always stays). The rows are
 * settled here whichever process holds the sessions: that process notices at the session's next
 * request (`touchOpenSession`). Count and settlement happen under a per-user
 * advisory lock, after the insert, in one transaction: concurrent opens on any number of
 * connections or processes end with at most `maxOpen` sessions open. Returns the new run and
 * the runs it closed.
 */
export async function insertSessionRunClosingLeastRecent(
  db: Db,
  run: RunStart & { user_id: string },
  maxOpen: number,
  closedAs: Settlement,
): Promise<{ run: RunRow; closed: RunRow[] }> {
  if (maxOpen <= 0) return { run: await insertRun(db, { ...run, kind: 'MCP' }), closed: [] };
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MCP_SESSION_LOCK}, hashtext(${run.user_id}::text))`.execute(trx);
    const opened = await insertRun(trx, { ...run, kind: 'MCP' });
    const closed = await trx
      .updateTable('runs')
      .set(reportedColumns({ ...closedAs, finalContent: storableText(closedAs.finalContent) }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('runs')
          .select('id')
          .where('user_id', '=', run.user_id)
          .where('kind', '=', 'MCP')
          .where('status', '=', 'RUNNING')
          .where('id', '<>', opened.id)
          .orderBy(sql`coalesce(last_request_at, created_at)`, 'desc')
          .orderBy('id')
          .offset(maxOpen - 1),
      )
      .where('status', '=', 'RUNNING')
      .returningAll()
      .execute();
    return { run: opened, closed };
  });
}

/** The idle deadline: a session without a request for `idleMs` is over, whether or not a sweep has settled it yet. */
const idleSince = (idleMs: number) => sql<Date>`now() - make_interval(secs => ${idleMs / 1000})`;

/**
 * A request of the session's user: records it (the idle clock and the session cap's order) and
 * returns the session's run, or undefined when there is no such open session for this user —
 * unknown, another user's, settled (closed, cancelled, interrupted), asked to cancel, or idle past
 * `idleMs`. One statement; the caller answers all of these alike (404).
 */
export async function touchOpenSession(db: Db, session: { id: string; userId: string; idleMs: number }): Promise<RunRow | undefined> {
  const [id] = onlyUuids([session.id]);
  if (id === undefined) return undefined;
  return db
    .updateTable('runs')
    .set({ last_request_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('kind', '=', 'MCP')
    .where('status', '=', 'RUNNING')
    .where('user_id', '=', session.userId)
    .where('cancel_requested_at', 'is', null)
    .where(sql<Date>`coalesce(last_request_at, created_at)`, '>=', idleSince(session.idleMs))
    .returningAll()
    .executeTakeFirst();
}

/**
 * Settles an open session (`userId`, when given, must be its user). Undefined when it was not open:
 * settling is exactly-once across instances (the WHERE clause on status).
 */
export async function settleSession(db: Db, id: string, end: SessionEnd, userId?: string): Promise<RunRow | undefined> {
  const [valid] = onlyUuids([id]);
  if (valid === undefined) return undefined;
  let query = db.updateTable('runs').set(endColumns(end)).where('id', '=', valid).where('kind', '=', 'MCP').where('status', '=', 'RUNNING');
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return query.returningAll().executeTakeFirst();
}

/** Settles every open session of a user (who lost access); returns the runs settled here. */
export async function settleSessionsOf(db: Db, userId: string, end: SessionEnd): Promise<RunRow[]> {
  return db.updateTable('runs').set(endColumns(end)).where('user_id', '=', userId).where('kind', '=', 'MCP').where('status', '=', 'RUNNING').returningAll().execute();
}

/**
 * The sweep any instance may run, as often as it likes: settles the open sessions whose run was
 * asked to cancel (`cancelRun`: CANCELLED) and those without a request for `idleMs` (COMPLETED),
 * all of them or only `ids`. Two instances sweeping at once settle each session once: the
 * second's WHERE no longer matches a row the first settled. Returns the runs settled here.
 */
export async function settleEndedSessions(db: Db, idleMs: number, ids?: readonly string[]): Promise<RunRow[]> {
  const valid = ids === undefined ? undefined : onlyUuids(ids);
  if (valid !== undefined && valid.length === 0) return [];
  const cancelled = endColumns('CANCELLED');
  const idle = endColumns('IDLE');
  let query = db
    .updateTable('runs')
    .set({
      ...idle,
      status: sql`case when cancel_requested_at is not null then ${cancelled.status} else ${idle.status} end`,
      termination_reason: sql`case when cancel_requested_at is not null then ${cancelled.termination_reason} else ${idle.termination_reason} end`,
    })
    .where('kind', '=', 'MCP')
    .where('status', '=', 'RUNNING')
    .where((eb) => eb.or([eb('cancel_requested_at', 'is not', null), eb(sql<Date>`coalesce(last_request_at, created_at)`, '<', idleSince(idleMs))]));
  if (valid !== undefined) query = query.where('id', 'in', valid);
  return query.returningAll().execute();
}

/** Of these sessions, those no longer open (settled anywhere, or asked to cancel): their calls in flight are abandoned. */
export async function sessionsNoLongerOpen(db: Db, ids: readonly string[]): Promise<string[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  const open = await db
    .selectFrom('runs')
    .select('id')
    .where('id', 'in', valid)
    .where('status', '=', 'RUNNING')
    .where('cancel_requested_at', 'is', null)
    .execute();
  const openIds = new Set(open.map((row) => row.id));
  return valid.filter((id) => !openIds.has(id));
}

/**
 * Stores one TOOL step of a session as its next step and returns its sequence. The sequence comes
 * from the run row in the same statement: the UPDATE raises `mcp_last_sequence` under the row's
 * lock, and the INSERT commits with it, so steps stored at once by any number of instances get
 * 1, 2, 3, … with no duplicate, and a statement that fails takes its number back (no gap). The
 * step's `round` (and its `toolCallId`, `call_<n>`, when the stored copy keeps one) is that
 * number. A step is stored even when the session ended meanwhile: the call began while it was
 * open. Also a request of the session: it moves the idle clock (a long call is not idleness).
 */
export async function insertSessionStep(db: Db, runId: string, step: { readonly payload: object; readonly durationMs: number | null }): Promise<number> {
  const payload = storableJson(step.payload);
  const result = await sql<{ sequence: number }>`
    with next as (
      update runs set mcp_last_sequence = mcp_last_sequence + 1, last_request_at = now()
      where id = ${runId}
      returning mcp_last_sequence as sequence
    )
    insert into run_steps (run_id, sequence, kind, round, duration_ms, payload)
    select ${runId}::uuid, next.sequence, 'TOOL', next.sequence, ${step.durationMs}::double precision,
      ${payload}::jsonb || jsonb_build_object('round', next.sequence)
        || case when (${payload}::jsonb -> 'toolCallId') is not null then jsonb_build_object('toolCallId', 'call_' || next.sequence) else '{}'::jsonb end
    from next
    returning sequence`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('the run of the MCP session does not exist');
  return Number(row.sequence);
}

/**
 * Takes one remote tool call from the session's budget (`max`, the configuration's
 * max_remote_tool_calls): false when it is spent. Atomic across instances.
 */
export async function reserveRemoteCall(db: Db, runId: string, max: number): Promise<boolean> {
  const reserved = await withSessionColumns(db)
    .updateTable('runs')
    .set({ mcp_remote_calls: sql<number>`mcp_remote_calls + 1` })
    .where('id', '=', runId)
    .where('mcp_remote_calls', '<', max)
    .executeTakeFirst();
  return reserved.numUpdatedRows > 0n;
}

import { type ExpressionBuilder, sql } from 'kysely';
import type { RunStatus } from '../../runtime/run.ts';
import type { Database, Db, RunRow } from '../database.ts';
import { prepared } from '../prepared.ts';
import { storableText } from '../storable-text.ts';

/**
 * How a run ends: as its process reported it (`settleRun`), without the outcome it could not store
 * (`settleRunWithoutOutcome`), or INTERRUPTED because its process is gone (`interruptedColumns`).
 * Each of them, the MCP session's end (mcp-sessions.ts) and a suspension (run-suspension.ts) build
 * on the same lists below, so a column every end must write is added in one place.
 */

/** A run that is no longer RUNNING has no owner and nothing to resume from. */
export const LEASE_ENDED = { checkpoint: null, lease_owner: null, lease_expires_at: null } as const;

/** What every change out of RUNNING writes: a new state version (the live feeds order by it) and no lease. */
export const LEFT_RUNNING = { state_version: sql<number>`state_version + 1`, ...LEASE_ENDED } as const;

export interface Settlement {
  readonly status: RunStatus;
  readonly terminationReason: string;
  readonly truncated: boolean;
  readonly iterations: number;
  readonly finalContent: string | null;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly estimatedCost: number;
  readonly errorMessage: string | null;
}

/** How a run ended, whichever way it is settled. */
export type RunEnd = Pick<Settlement, 'status' | 'terminationReason' | 'errorMessage'>;

/** The columns every settlement writes (the settle-columns list); each way of settling adds its totals. */
export function settleColumns(end: RunEnd) {
  return {
    status: end.status,
    termination_reason: end.terminationReason,
    error_message: end.errorMessage,
    finished_at: sql<Date>`now()`,
    ...LEFT_RUNNING,
  };
}

/** The counts a run's own process reports (settling or parking it). */
export function countedColumns(counts: Pick<Settlement, 'iterations' | 'promptTokens' | 'completionTokens' | 'estimatedCost'>) {
  return {
    iterations: counts.iterations,
    prompt_tokens: counts.promptTokens,
    completion_tokens: counts.completionTokens,
    estimated_cost: counts.estimatedCost,
  };
}

/** What `settleRun` writes: the end as reported (the caller makes `finalContent` storable). */
export function reportedColumns(settlement: Settlement) {
  return { ...settleColumns(settlement), ...countedColumns(settlement), truncated: settlement.truncated, final_content: settlement.finalContent };
}

/**
 * Still open (RUNNING or WAITING_FOR_APPROVAL) and, when `epoch` is given, still under that lease
 * epoch: the condition that makes settling exactly-once even across processes.
 */
const openUnder = (epoch: number | null) => (eb: ExpressionBuilder<Database, 'runs'>) =>
  eb.and([eb('status', 'in', ['RUNNING', 'WAITING_FOR_APPROVAL']), sql<boolean>`(${epoch}::integer is null or lease_epoch = ${epoch}::integer)`]);

const settleStatement = prepared(
  ['id', 'status', 'terminationReason', 'truncated', 'iterations', 'finalContent', 'promptTokens', 'completionTokens', 'estimatedCost', 'errorMessage', 'epoch'],
  (db, settlement: Settlement & { id: string; epoch: number | null }) =>
    db.updateTable('runs').set(reportedColumns(settlement)).where('id', '=', settlement.id).where(openUnder(settlement.epoch)).returningAll(),
);

/**
 * Settles a run that is still open (RUNNING or WAITING_FOR_APPROVAL). Returns undefined when the
 * run was already settled, or when `epoch` is given and the run's lease has moved on to another
 * process: the WHERE clause makes settling exactly-once even across processes.
 */
export async function settleRun(db: Db, id: string, settlement: Settlement, epoch: number | null = null): Promise<RunRow | undefined> {
  return (await settleStatement(db, { ...settlement, id, finalContent: storableText(settlement.finalContent), epoch }))[0];
}

/** A run's totals as its usage rows recorded them, for settling a run whose own totals are not at hand. */
const totalsFromUsageRecords = {
  prompt_tokens: sql<number>`(select coalesce(sum(u.prompt_tokens), 0)::bigint from usage_records u where u.run_id = runs.id)`,
  completion_tokens: sql<number>`(select coalesce(sum(u.completion_tokens), 0)::bigint from usage_records u where u.run_id = runs.id)`,
  estimated_cost: sql<number>`(select coalesce(sum(u.cost), 0) from usage_records u where u.run_id = runs.id)`,
};

/**
 * A run's iterations as its stored LLM steps show them, for a run whose process died: the rounds
 * with a stored answer, never the synthesis call (its round is past the configuration's cap), and
 * never fewer than the count the run already carried (from a suspension).
 */
const iterationsFromStoredSteps = sql<number>`greatest(runs.iterations, (
  select count(distinct s.round)::int from run_steps s
  where s.run_id = runs.id and s.kind = 'LLM'
    and s.round <= coalesce((select c.max_iterations from configurations c where c.id = runs.configuration_id), 2147483647)))`;

/**
 * Settles a run whose outcome could not be stored as reported: its status and reason are kept, the
 * final answer is not, the totals are what its usage rows recorded, and the audit is flagged
 * incomplete. Exactly-once like `settleRun`.
 */
export async function settleRunWithoutOutcome(
  db: Db,
  id: string,
  settlement: Pick<Settlement, 'status' | 'terminationReason' | 'truncated' | 'iterations' | 'errorMessage'>,
  /** As for `settleRun`: refused when the run's lease moved on to another epoch. */
  epoch: number | null = null,
): Promise<RunRow | undefined> {
  return db
    .updateTable('runs')
    .set({
      ...settleColumns(settlement),
      truncated: settlement.truncated,
      iterations: settlement.iterations,
      final_content: null,
      audit_incomplete: true,
      ...totalsFromUsageRecords,
    })
    .where('id', '=', id)
    .where(openUnder(epoch))
    .returningAll()
    .executeTakeFirst();
}

/** What settling a run whose process is gone (or whose checkpoint cannot be opened) writes. */
export function interruptedColumns(errorMessage: string) {
  return {
    ...settleColumns({ status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage }),
    // The process that would have written the totals is gone: its usage rows are the record.
    ...totalsFromUsageRecords,
    iterations: iterationsFromStoredSteps,
  };
}

/**
 * Whether a RUNNING agent run's process is presumed gone: its lease lapsed (a row written before
 * leases existed: its heartbeat is older than `staleAfterMs`).
 */
export function ownerGone(staleAfterMs: number) {
  const stale = sql<boolean>`heartbeat_at < now() - make_interval(secs => ${staleAfterMs / 1000})`;
  return sql<boolean>`(case when lease_expires_at is not null then lease_expires_at < now() else ${stale} end)`;
}

/**
 * Settles INTERRUPTED every RUNNING agent run whose process is presumed gone (`ownerGone`), when
 * runs are not resumed (AIRLOCK_RESUME_RUNS=false). MCP sessions belong to no process: their own
 * sweep ends them (mcp-sessions.ts). Returns the settled rows.
 */
export async function settleStaleRuns(db: Db, staleAfterMs: number): Promise<RunRow[]> {
  return db
    .updateTable('runs')
    .set(interruptedColumns('The server running this run stopped before it finished.'))
    .where('status', '=', 'RUNNING')
    .where('kind', '=', 'AGENT')
    .where(ownerGone(staleAfterMs))
    .returningAll()
    .execute();
}

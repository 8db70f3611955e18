import { sql, type SelectQueryBuilder } from 'kysely';
import type { RunKind, RunStatus } from '../../runtime/run.ts';
import type { Database, Db, NewRun, RunRow, RunStepRow } from '../database.ts';
import { onlyUuids } from '../errors.ts';
import { prepared } from '../prepared.ts';

/**
 * What PostgreSQL cannot store, in the text a model or a tool produced: jsonb refuses the `\u0000`
 * escape and unpaired surrogate escapes (which JSON.stringify writes for NUL and lone surrogates),
 * text refuses NUL. One such character used to make a step (or the outcome) fail to store, so an
 * injected NUL could erase its own step from the audit trail (issue 7, found by
 * test/security/prompt-injection.test.ts). They are stored as U+FFFD; everything else verbatim.
 * The pattern consumes escaped backslashes first, so a literal `\\u0000` in the text stays as is.
 */
const UNSTORABLE_JSON_ESCAPE = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

export function storableJson(value: object): string {
  const json = JSON.stringify(value);
  // Without any `\u` escape there is nothing to replace (the usual case): skip the scan.
  if (!json.includes('\\u')) return json;
  return json.replace(UNSTORABLE_JSON_ESCAPE, (escape) => (escape === '\\\\' ? escape : '\\ufffd'));
}

function storableText(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\ufffd');
}

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

/** The columns a settlement writes (the caller makes `finalContent` storable). */
function settledColumns(settlement: Settlement) {
  return {
    status: settlement.status,
    termination_reason: settlement.terminationReason,
    truncated: settlement.truncated,
    iterations: settlement.iterations,
    final_content: settlement.finalContent,
    prompt_tokens: settlement.promptTokens,
    completion_tokens: settlement.completionTokens,
    estimated_cost: settlement.estimatedCost,
    error_message: settlement.errorMessage,
    finished_at: sql<Date>`now()`,
    state_version: sql<number>`state_version + 1`,
    ...LEASE_ENDED,
  };
}

/** A run that is no longer RUNNING has no owner and nothing to resume from. */
export const LEASE_ENDED = { checkpoint: null, lease_owner: null, lease_expires_at: null } as const;

const settleStatement = prepared(
  ['id', 'status', 'terminationReason', 'truncated', 'iterations', 'finalContent', 'promptTokens', 'completionTokens', 'estimatedCost', 'errorMessage', 'epoch'],
  (db, settlement: Settlement & { id: string; epoch: number | null }) =>
    db
      .updateTable('runs')
      .set(settledColumns(settlement))
      .where('id', '=', settlement.id)
      .where('status', 'in', ['RUNNING', 'WAITING_FOR_APPROVAL'])
      .where(sql<boolean>`(${settlement.epoch}::integer is null or lease_epoch = ${settlement.epoch}::integer)`)
      .returningAll(),
);

/**
 * Settles a run that is still open (RUNNING or WAITING_FOR_APPROVAL). Returns undefined when the
 * run was already settled, or when `epoch` is given and the run's lease has moved on to another
 * process: the WHERE clause makes settling exactly-once even across processes.
 */
export async function settleRun(db: Db, id: string, settlement: Settlement, epoch: number | null = null): Promise<RunRow | undefined> {
  return (await settleStatement(db, { ...settlement, id, finalContent: storableText(settlement.finalContent), epoch }))[0];
}

export async function markAuditIncomplete(db: Db, id: string): Promise<void> {
  await db.updateTable('runs').set({ audit_incomplete: true }).where('id', '=', id).execute();
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
 * request (`touchOpenSession`, mcp-sessions.ts). Count and settlement happen under a per-user
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
      .set(settledColumns({ ...closedAs, finalContent: storableText(closedAs.finalContent) }))
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
      status: settlement.status,
      termination_reason: settlement.terminationReason,
      truncated: settlement.truncated,
      iterations: settlement.iterations,
      final_content: null,
      error_message: settlement.errorMessage,
      audit_incomplete: true,
      finished_at: sql`now()`,
      state_version: sql<number>`state_version + 1`,
      ...totalsFromUsageRecords,
      ...LEASE_ENDED,
    })
    .where('id', '=', id)
    .where('status', 'in', ['RUNNING', 'WAITING_FOR_APPROVAL'])
    .where(sql<boolean>`(${epoch}::integer is null or lease_epoch = ${epoch}::integer)`)
    .returningAll()
    .executeTakeFirst();
}

/** What settling a run whose process is gone (or whose checkpoint cannot be opened) writes. */
export function interruptedColumns(errorMessage: string) {
  return {
    status: 'FAILED' as const,
    termination_reason: 'INTERRUPTED',
    error_message: errorMessage,
    finished_at: sql<Date>`now()`,
    state_version: sql<number>`state_version + 1`,
    // The process that would have written the totals is gone: its usage rows are the record.
    ...totalsFromUsageRecords,
    iterations: iterationsFromStoredSteps,
    ...LEASE_ENDED,
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
      ...LEASE_ENDED,
      status: 'WAITING_FOR_APPROVAL',
      suspended_state: suspension.sealedState,
      suspended_digest: suspension.digest,
      iterations: suspension.iterations,
      prompt_tokens: suspension.promptTokens,
      completion_tokens: suspension.completionTokens,
      estimated_cost: suspension.estimatedCost,
      state_version: sql<number>`state_version + 1`,
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

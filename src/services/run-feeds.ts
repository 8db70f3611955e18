import type { Db, RunRow } from '../db/database.ts';
import type { SecretBox } from '../db/secret-box.ts';
import { listRuns } from '../db/repositories/run-list.ts';
import { NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createCoalescingOutbox } from '../runtime/coalesce.ts';
import type { TimerWheel } from '../runtime/timer-wheel.ts';
import { SUBSCRIBER_BUFFER, type RunBusEvent, type RunEventBus } from '../runtime/events.ts';
import type { Suspension } from '../runtime/approval.ts';
import type { Actor } from '../tools/tool.ts';
import { pendingApprovals } from './approvals.ts';
import { matchesRunFilter, type RunFilter } from './run-filter.ts';
import { ListedRuns } from './run-host/lost-ends.ts';
import { settledRunOf } from './run-stream.ts';

/** What the live list feeds read: the runs (snapshots), the bus (changes), the sealed approval state. */
export interface RunFeedDeps {
  readonly db: Db;
  readonly bus: RunEventBus<RunRow>;
  readonly secrets: SecretBox;
  readonly logger: Logger;
  /** The instance's timer wheel: every feed's coalescing windows on one timer (default: a timer per window). */
  readonly timers?: TimerWheel;
}

/** Runs in a feed's snapshot (newest first for `runUpdates`, oldest first for `approvalRequests`). */
export const FEED_SNAPSHOT_SIZE = 100;
/** `runUpdates` delivers at most one update per run per window; the last state is always delivered. */
export const RUN_UPDATE_WINDOW_MS = 250;

export interface RunUpdate {
  /** The run as stored, with its progress (iterations, usage so far) while it runs. */
  readonly run: RunRow;
  readonly snapshot: boolean;
  /**
   * When the bus event that produced this update was published (epoch ms, its instance's clock);
   * for updates that folded several events, the newest one's. Null for snapshot rows.
   */
  readonly publishedAt: number | null;
}

export interface FeedOptions {
  readonly snapshotSize?: number;
  readonly windowMs?: number;
  /** Runs with an undelivered update one subscriber may hold (default SUBSCRIBER_BUFFER). */
  readonly maxPendingRuns?: number;
}

/**
 * Where an event stands in its run's history: the row's state version (raised by every park, claim
 * and settlement) then the step sequence within it. A row read from storage stands at
 * `[state_version, 0]`; a feed drops every event not strictly after what it already showed.
 */
type Position = readonly [version: number, sequence: number];
const after = (a: Position, b: Position) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
const positionOf = (run: RunRow): Position => [run.state_version, 0];

/**
 * Every feed of this process hands out the same objects for the same state, so that the GraphQL
 * layer can execute an update once for all subscribers of one audience (src/graphql/plugins/shared-execution.ts):
 * the row a step's progress makes of a row (every feed that saw the run start derives from the same
 * `started` row, so the chain stays shared), and the live update wrapping a row. A row comes from
 * one bus event (it carried the row, or its progress derived it), so its update has one `publishedAt`.
 */
const progressedRows = new WeakMap<RunRow, { readonly event: object; readonly row: RunRow }>();
const liveUpdates = new WeakMap<RunRow, RunUpdate>();
const liveUpdateOf = (run: RunRow, publishedAt: number): RunUpdate => {
  let update = liveUpdates.get(run);
  if (update?.publishedAt !== publishedAt) liveUpdates.set(run, (update = { run, snapshot: false, publishedAt }));
  return update;
};

/** The row of a run's end, read once for every feed here when the event carries none; null for a run deleted since. */
function finishedRun(db: Db, event: Extract<RunBusEvent<RunRow>, { type: 'finished' }>): Promise<RunRow | null> {
  return settledRunOf(db, event).catch((error: unknown) => {
    if (error instanceof NotFoundError) return null;
    throw error;
  });
}

/** Releases the bus subscription when the feed ends, however it ends. */
function feedStream<T>(source: () => Promise<IteratorResult<T>>, release: () => void): AsyncGenerator<T> {
  let released = false;
  const releaseOnce = () => {
    if (!released) (released = true), release();
  };
  const stream: AsyncGenerator<T> = {
    next: async () => {
      try {
        const result = await source();
        if (result.done) releaseOnce();
        return result;
      } catch (error) {
        releaseOnce();
        throw error;
      }
    },
    return: async (value) => (releaseOnce(), { value, done: true }),
    throw: async (error) => {
      releaseOnce();
      throw error;
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

/**
 * The live runs list of one viewer: first the runs matching `filter` (newest first, at most
 * `snapshotSize`, `snapshot: true`), then an update whenever a matching run is created, changes
 * status, makes progress or finishes. Order guarantee: the bus is subscribed BEFORE the snapshot is
 * read, and every event not strictly after what the snapshot showed for its run is dropped, so
 * nothing falls between snapshot and live and nothing goes back in time; per run, updates come in
 * the run's order, at most one per `windowMs`, and the last one carries the run's final state.
 * A run that stops matching the filter gets one more update (its new state) so a list can drop it.
 * Progress events of a run the feed never saw (started before the feed, outside its snapshot) are
 * skipped: the run appears at its next change of state.
 */
export async function runUpdates(deps: RunFeedDeps, filter: RunFilter, options: FeedOptions = {}): Promise<AsyncGenerator<RunUpdate>> {
  const events = deps.bus.subscribeAll({ types: ['started', 'step', 'suspended', 'decided', 'resumed', 'finished'] });
  let snapshot: RunRow[];
  try {
    snapshot = await listRuns(deps.db, { filter, after: null, before: null, limit: options.snapshotSize ?? FEED_SNAPSHOT_SIZE, inverted: false });
  } catch (error) {
    await events.return?.();
    throw error;
  }
  // Coalescing keeps the newest update of a run: its row and the time of the event that made it.
  const outbox = createCoalescingOutbox<string, RunUpdate>({
    windowMs: options.windowMs ?? RUN_UPDATE_WINDOW_MS,
    maxPending: options.maxPendingRuns ?? SUBSCRIBER_BUFFER,
    ...(deps.timers ? { schedule: deps.timers.schedule } : {}),
  });
  /** Open runs this feed knows: their last accepted row and its position (an end lost with its process still comes: lost-ends.ts). */
  const known = new ListedRuns<{ row: RunRow; position: Position; shown: boolean }>(deps.bus);
  for (const row of snapshot) {
    if (row.status === 'RUNNING' || row.status === 'WAITING_FOR_APPROVAL') known.set(row.id, { row, position: positionOf(row), shown: true });
  }

  /** Settled runs the snapshot showed (at most snapshotSize): nothing of their history is news. */
  const settledInSnapshot = new Map(snapshot.filter((row) => !known.has(row.id)).map((row) => [row.id, positionOf(row)]));

  const accept = (row: RunRow, position: Position, last: boolean, publishedAt: number) => {
    const shownSettled = settledInSnapshot.get(row.id);
    if (shownSettled && !after(position, shownSettled)) return;
    const entry = known.get(row.id);
    if (entry && !after(position, entry.position)) return;
    const matches = matchesRunFilter(row, filter);
    if (last) known.delete(row.id);
    else known.set(row.id, { row, position, shown: matches || false });
    // A change of status is what a list is for: it goes out at once; progress waits for its window.
    const statusChanged = entry === undefined || entry.row.status !== row.status;
    if (matches || entry?.shown) outbox.offer(row.id, liveUpdateOf(row, publishedAt), last, statusChanged);
  };

  const fold = async (event: RunBusEvent<RunRow>) => {
    switch (event.type) {
      case 'started':
        return accept(event.run, positionOf(event.run), false, event.publishedAt);
      case 'step': {
        const entry = known.get(event.runId);
        if (!entry) return;
        const { progress } = event;
        // Only LLM steps move the totals; a REQUEST or TOOL step shows nothing new on a list.
        if (progress.iterations === entry.row.iterations && progress.usage.promptTokens === entry.row.prompt_tokens && progress.usage.completionTokens === entry.row.completion_tokens) return;
        let derived = progressedRows.get(entry.row);
        if (derived?.event !== event) {
          const row: RunRow = {
            ...entry.row,
            iterations: Math.max(entry.row.iterations, progress.iterations),
            prompt_tokens: progress.usage.promptTokens,
            completion_tokens: progress.usage.completionTokens,
            estimated_cost: progress.usage.cost,
          };
          progressedRows.set(entry.row, (derived = { event, row }));
        }
        return accept(derived.row, [event.stateVersion, event.sequence], false, event.publishedAt);
      }
      case 'suspended':
      case 'decided':
      case 'resumed':
        return accept(event.run, positionOf(event.run), false, event.publishedAt);
      case 'finished': {
        const run = await finishedRun(deps.db, event);
        if (!run) return;
        return accept(run, positionOf(run), true, event.publishedAt);
      }
    }
  };

  let snapshotLeft = snapshot.slice();
  let pumping = false;
  const pump = async () => {
    pumping = true;
    try {
      for (;;) {
        const result = await events.next();
        if (result.done) return outbox.close();
        await fold(result.value);
      }
    } catch (error) {
      outbox.fail(error instanceof Error ? error : new Error(String(error)));
    }
  };

  return feedStream<RunUpdate>(
    async () => {
      const row = snapshotLeft.shift();
      if (row) {
        outbox.sent(row.id);
        return { value: { run: row, snapshot: true, publishedAt: null }, done: false };
      }
      if (!pumping) void pump();
      const next = await outbox.next();
      return next.done ? next : { value: next.value.value, done: false };
    },
    () => {
      snapshotLeft = [];
      void events.return?.();
      outbox.close();
      known.clear();
    },
  );
}

export type ApprovalRequest =
  | { readonly kind: 'WAITING'; readonly run: RunRow; readonly turn: Pick<Suspension, 'digest' | 'calls' | 'previews'>; readonly snapshot: boolean }
  | { readonly kind: 'DECIDED'; readonly run: RunRow; readonly approved: boolean; readonly decidedBy: { id: string; name: string }; readonly digest: string }
  | { readonly kind: 'CANCELLED'; readonly run: RunRow };

/**
 * The live approvals queue of one viewer, for the runs they may decide (their own; an admin: all —
 * including runs whose configuration wants a second approver, which their initiator may still
 * deny): first the runs waiting now (as `pendingApprovals` gives them, oldest first, at most
 * `snapshotSize`, `snapshot: true`), then WAITING when a run parks, DECIDED when its turn is
 * approved or denied, CANCELLED when a waiting run is cancelled. Same order guarantee as
 * `runUpdates` (subscribed before the snapshot; events not after what was shown are dropped). Not
 * coalesced (these events are rare); a reader that stops reading is cut off after
 * SUBSCRIBER_BUFFER events with SubscriberOverflowError.
 */
export async function approvalRequests(deps: RunFeedDeps, viewer: Actor, options: Pick<FeedOptions, 'snapshotSize'> = {}): Promise<AsyncGenerator<ApprovalRequest>> {
  const events = deps.bus.subscribeAll({ types: ['suspended', 'decided', 'finished'] });
  let snapshot;
  try {
    snapshot = await pendingApprovals(deps, viewer, options.snapshotSize ?? FEED_SNAPSHOT_SIZE);
  } catch (error) {
    await events.return?.();
    throw error;
  }
  const mayDecide = (run: RunRow) => viewer.isAdmin || run.user_id === viewer.id;
  /** Runs this feed showed waiting, at the position it showed them. */
  const waiting = new ListedRuns<Position>(deps.bus);
  for (const { run } of snapshot) waiting.set(run.id, positionOf(run));
  let snapshotLeft: ApprovalRequest[] = snapshot.map(({ run, suspended }) => ({ kind: 'WAITING', run, turn: suspended.suspension, snapshot: true }));

  const live = async (): Promise<IteratorResult<ApprovalRequest>> => {
    for (;;) {
      const result = await events.next();
      if (result.done) return result;
      const event = result.value;
      if (event.type === 'started' || event.type === 'step') continue; // not subscribed
      if (event.type === 'suspended') {
        if (!mayDecide(event.run)) continue;
        const shown = waiting.get(event.runId);
        if (shown && !after(positionOf(event.run), shown)) continue;
        waiting.set(event.runId, positionOf(event.run));
        return { value: { kind: 'WAITING', run: event.run, turn: event, snapshot: false }, done: false };
      }
      const shown = waiting.get(event.runId);
      if (!shown) continue; // never shown waiting: nothing to take off the queue
      const run = event.type === 'finished' ? await finishedRun(deps.db, event) : event.run;
      if (!run || !after(positionOf(run), shown)) continue;
      waiting.delete(event.runId);
      if (event.type === 'decided') {
        return { value: { kind: 'DECIDED', run, approved: event.approved, decidedBy: event.decidedBy, digest: event.digest }, done: false };
      }
      return { value: { kind: 'CANCELLED', run }, done: false };
    }
  };

  return feedStream<ApprovalRequest>(
    async () => {
      const next = snapshotLeft.shift();
      return next ? { value: next, done: false } : live();
    },
    () => {
      snapshotLeft = [];
      void events.return?.();
      waiting.clear();
    },
  );
}

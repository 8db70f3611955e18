import type { Db, RunRow } from '../db/database.ts';
import { findRunsByIds } from '../db/repositories/runs.ts';
import { NotFoundError } from '../errors.ts';
import type { Suspension } from '../runtime/approval.ts';
import type { ResumeReason, RunBusEvent } from '../runtime/events.ts';
import { SETTLED_STATUSES } from '../runtime/run.ts';
import type { StoredStep } from '../runtime/stored-step.ts';
import type { Actor } from '../tools/tool.ts';
import { visibleRun } from './approvals.ts';
import { queuedStream, type Outlet } from './queued-stream.ts';
import type { RunHost } from './run-host/run-host.ts';

/** What a run stream reads: the runs (rows, stored steps, sealed waiting state) and their live events. */
export interface RunStreamDeps {
  readonly db: Db;
  readonly runHost: Pick<RunHost, 'start' | 'replay' | 'subscribe' | 'suspendedState'>;
}

/**
 * What one watcher of a run receives, in order: the run, its steps, its parks, its end. `publishedAt`:
 * the bus event's publication time (epoch ms) for what arrives live; null for what is read from
 * storage (the replay, a gap filled, the state of a parked or settled run).
 */
export type RunStreamEvent = { readonly publishedAt: number | null } & (
  | { readonly kind: 'started'; readonly run: RunRow }
  | { readonly kind: 'step'; readonly view: { readonly runId: string; readonly sequence: number; readonly step: StoredStep } }
  | { readonly kind: 'suspended'; readonly run: RunRow; readonly turn: Pick<Suspension, 'digest' | 'calls' | 'previews'> }
  /** Another process took the run over; its next step is `fromSequence`, every step before it was delivered. */
  | { readonly kind: 'resumed'; readonly run: RunRow; readonly fromSequence: number; readonly reason: ResumeReason }
  | { readonly kind: 'finished'; readonly run: RunRow }
);

async function loadRun(db: Db, runId: string): Promise<RunRow> {
  const [run] = await findRunsByIds(db, [runId]);
  if (!run) throw new NotFoundError('Run', runId);
  return run;
}

/**
 * The stream events a bus event becomes, one object per (bus event, variant): every subscriber
 * that receives the same variant gets the same object, so its execution is shared
 * (graphql/plugins/shared-execution.ts). A step's variants are admin (verbatim) and filtered; a
 * run's end, with or without the live final answer; every other event has one.
 */
const streamEvents = new WeakMap<object, Map<string, RunStreamEvent>>();
function sharedStreamEvent(event: RunBusEvent<RunRow>, variant: string, build: () => RunStreamEvent): RunStreamEvent {
  let variants = streamEvents.get(event);
  if (!variants) streamEvents.set(event, (variants = new Map()));
  let streamEvent = variants.get(variant);
  if (!streamEvent) variants.set(variant, (streamEvent = build()));
  return streamEvent;
}

function stepEventFor(event: Extract<RunBusEvent<RunRow>, { type: 'step' }>, admin: boolean): RunStreamEvent {
  return sharedStreamEvent(event, admin ? 'admin' : 'filtered', () => ({
    kind: 'step',
    view: { runId: event.runId, sequence: event.sequence, step: admin ? event.full : event.filtered },
    publishedAt: event.publishedAt,
  }));
}

/**
 * The settled run of a `finished` event, read once for every reader of the event in this process
 * (the run's watchers, the live lists) when the event carries none.
 */
const settledRuns = new WeakMap<object, Promise<RunRow>>();
export function settledRunOf(db: Db, event: Extract<RunBusEvent<RunRow>, { type: 'finished' }>): Promise<RunRow> {
  if (event.run) return Promise.resolve(event.run);
  let run = settledRuns.get(event);
  if (!run) settledRuns.set(event, (run = loadRun(db, event.runId)));
  return run;
}

/**
 * Reads of storage shared by the watchers of this process that wait on the same bus event with the
 * same last delivered step: when a run watched 1 000 times ends, storage is read once, not 1 000
 * times. Keyed by the event object (the bus hands every subscriber the same one), so a read lives
 * as long as the event it answers.
 */
const sharedReads = new WeakMap<object, Map<number, ReturnType<RunStreamDeps['runHost']['replay']>>>();
function storedAfter(deps: RunStreamDeps, runId: string, afterSequence: number, sharedBy: object | null): ReturnType<RunStreamDeps['runHost']['replay']> {
  if (!sharedBy) return deps.runHost.replay(runId, afterSequence);
  let reads = sharedReads.get(sharedBy);
  if (!reads) sharedReads.set(sharedBy, (reads = new Map()));
  let read = reads.get(afterSequence);
  if (!read) reads.set(afterSequence, (read = deps.runHost.replay(runId, afterSequence)));
  return read;
}

/**
 * Puts out the stored steps after `afterSequence` and before `before`, in order, as the persisted
 * (filtered) copy; resolves with the last sequence it put (`afterSequence` when none). A step is
 * published only after its commit, and a run is settled only after its steps committed, so
 * whatever a watcher missed before a later event is in storage when that event arrives.
 */
async function putStoredSteps(
  deps: RunStreamDeps,
  runId: string,
  afterSequence: number,
  out: Outlet<RunStreamEvent>,
  options: { readonly before?: number; readonly sharedBy?: object } = {},
): Promise<number> {
  let lastSequence = afterSequence;
  for (const { sequence, step } of await storedAfter(deps, runId, afterSequence, options.sharedBy ?? null)) {
    if (sequence >= (options.before ?? Infinity)) break;
    lastSequence = sequence;
    out.push({ kind: 'step', view: { runId, sequence, step }, publishedAt: null });
  }
  return lastSequence;
}

/** What a watcher has delivered so far: steps at or below `lastSequence` are not delivered again. */
interface Delivered {
  lastSequence: number;
}

/**
 * Turns bus events into stream events for one viewer: admins get the live steps verbatim, everyone
 * else the copy at the run's privacy level. Steps at or below `delivered.lastSequence` were already
 * sent (replay) and are skipped. No event comes before a stored step it follows: before a live step
 * that skips ahead, a park or the end, the steps stored after the last one delivered are read and
 * put out first (at the run's privacy level, for admins too) — live events lost on the way from
 * another instance, or never published because their instance died between commit and
 * publication. The initiator and admins receive the live final answer even when the privacy level
 * does not store it. Ends the stream when the run finished (or parked, with `endOnSuspension`).
 * Returns nothing for what it handled at once (a step in order: nearly every event), a promise when
 * it reads storage first.
 */
function liveHandler(
  deps: RunStreamDeps,
  viewer: Actor,
  runId: string,
  delivered: Delivered,
  options: { endOnSuspension?: boolean; startedRun?: RunRow } = {},
): (event: RunBusEvent<RunRow>, out: Outlet<RunStreamEvent>) => Promise<void> | void {
  const putStep = (event: Extract<RunBusEvent<RunRow>, { type: 'step' }>, out: Outlet<RunStreamEvent>) => {
    delivered.lastSequence = event.sequence;
    out.push(stepEventFor(event, viewer.isAdmin));
  };
  return (event, out) => {
    switch (event.type) {
      case 'started':
        out.push(
          options.startedRun
            ? { kind: 'started', run: options.startedRun, publishedAt: event.publishedAt }
            : sharedStreamEvent(event, 'started', () => ({ kind: 'started', run: event.run, publishedAt: event.publishedAt })),
        );
        return;
      case 'step':
        if (event.sequence <= delivered.lastSequence) return;
        if (event.sequence === delivered.lastSequence + 1) return putStep(event, out);
        return putStoredSteps(deps, runId, delivered.lastSequence, out, { before: event.sequence, sharedBy: event }).then(() => putStep(event, out));
      case 'suspended':
        return putStoredSteps(deps, runId, delivered.lastSequence, out, { sharedBy: event }).then((last) => {
          delivered.lastSequence = last;
          out.push(sharedStreamEvent(event, 'suspended', () => ({ kind: 'suspended', run: event.run, turn: event, publishedAt: event.publishedAt })));
          // A parked run belongs to no connection: runAgent ends here (leaving does not cancel it);
          // runEvents keeps streaming through the resume.
          if (options.endOnSuspension) out.end();
        });
      case 'decided':
        return; // the APPROVAL step that follows tells the decision
      case 'resumed': {
        const putResumed = () =>
          out.push(sharedStreamEvent(event, 'resumed', () => ({ kind: 'resumed', run: event.run, fromSequence: event.fromSequence, reason: event.reason, publishedAt: event.publishedAt })));
        // What the process that died stored but never published comes first.
        if (event.fromSequence <= delivered.lastSequence + 1) return putResumed();
        return putStoredSteps(deps, runId, delivered.lastSequence, out, { before: event.fromSequence, sharedBy: event }).then((last) => {
          delivered.lastSequence = last;
          putResumed();
        });
      }
      case 'finished':
        return putStoredSteps(deps, runId, delivered.lastSequence, out, { sharedBy: event })
          .then(() => settledRunOf(deps.db, event))
          .then((run) => {
            const mayReadAnswer = viewer.isAdmin || run.user_id === viewer.id;
            out.push(
              sharedStreamEvent(event, mayReadAnswer ? 'finished with the answer' : 'finished', () => ({
                kind: 'finished',
                run: mayReadAnswer ? { ...run, final_content: event.finalContent } : run,
                publishedAt: event.publishedAt,
              })),
            );
            out.end();
          });
    }
  };
}

/**
 * Starts a run tied to this stream (runAgent): RunStarted, one step per step, then its end or its
 * park. A client that leaves before the end cancels the run; one that leaves after the park does not.
 */
export async function startAndFollowRun(deps: RunStreamDeps, viewer: Actor, input: unknown): Promise<AsyncGenerator<RunStreamEvent>> {
  const started = await deps.runHost.start(viewer, input);
  const handle = liveHandler(deps, viewer, started.run.id, { lastSequence: 0 }, { endOnSuspension: true, startedRun: started.run });
  return queuedStream(null, { events: started.events, handle }, (endedEarly) => {
    void started.events.return?.();
    if (endedEarly) started.cancel();
  });
}

/**
 * Follows a run the viewer may see (runEvents): its stored steps, then live while it runs (no gap,
 * no duplicate: the bus is subscribed before storage is read), through parks and resumes, to its
 * end, which comes after every step stored before it.
 */
export async function followRun(deps: RunStreamDeps, viewer: Actor, runId: string): Promise<AsyncGenerator<RunStreamEvent>> {
  const visible = await visibleRun(deps.db, viewer, runId);
  if (!visible) throw new NotFoundError('Run', runId);
  // A run is settled only after its steps are stored: a settled run is its steps and its end, with
  // nothing live to wait for (the console opening a past run reads two rows of storage, no bus).
  if (SETTLED_STATUSES.has(visible.status)) {
    const stored = await deps.runHost.replay(runId, 0);
    return queuedStream(
      (out) => {
        out.push({ kind: 'started', run: visible, publishedAt: null });
        for (const { sequence, step } of stored) out.push({ kind: 'step', view: { runId, sequence, step }, publishedAt: null });
        out.push({ kind: 'finished', run: visible, publishedAt: null });
        out.end();
      },
      null,
      () => undefined,
    );
  }
  const events = deps.runHost.subscribe(runId);
  let stored;
  let current: RunRow;
  try {
    stored = await deps.runHost.replay(runId, 0);
    current = await loadRun(deps.db, runId);
  } catch (error) {
    await events.return?.();
    throw error;
  }
  const delivered: Delivered = { lastSequence: 0 };
  const replay = (out: Outlet<RunStreamEvent>): Promise<void> | void => {
    out.push({ kind: 'started', run: current, publishedAt: null });
    for (const { sequence, step } of stored) {
      delivered.lastSequence = sequence;
      out.push({ kind: 'step', view: { runId, sequence, step }, publishedAt: null });
    }
    // The run may have parked or ended after its steps were read: what it stored before comes first.
    if (SETTLED_STATUSES.has(current.status)) {
      return putStoredSteps(deps, runId, delivered.lastSequence, out).then(() => {
        out.push({ kind: 'finished', run: current, publishedAt: null });
        out.end();
      });
    }
    const waiting = deps.runHost.suspendedState(current);
    if (waiting) {
      return putStoredSteps(deps, runId, delivered.lastSequence, out).then((last) => {
        delivered.lastSequence = last;
        out.push({ kind: 'suspended', run: current, turn: waiting.suspension, publishedAt: null });
      });
    }
  };
  return queuedStream(replay, { events, handle: liveHandler(deps, viewer, runId, delivered) }, () => events.return?.());
}

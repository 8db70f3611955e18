import { encodeGlobalID } from '@pothos/plugin-relay';
import type { Context } from '../../context.ts';
import type { RunRow } from '../../db/database.ts';
import { findRunsByIds } from '../../db/repositories/runs.ts';
import { NotFoundError } from '../../errors.ts';
import type { RunBusEvent } from '../../runtime/events.ts';
import { visibleRun } from '../../services/approvals.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../ids.ts';
import { pendingCallsOf, PendingToolCallRef, type PendingTurn } from './approvals.ts';
import { RunStepRef, type StepView } from './run-steps.ts';
import { RunAgentInput, runInputOf } from './run-start.ts';
import { RunRef } from './runs.ts';

type ClientEvent =
  | { readonly kind: 'started'; readonly run: RunRow }
  | { readonly kind: 'step'; readonly view: StepView }
  | { readonly kind: 'suspended'; readonly run: RunRow; readonly turn: PendingTurn }
  | { readonly kind: 'finished'; readonly run: RunRow };

const RunSuspendedEventRef = builder.objectRef<Extract<ClientEvent, { kind: 'suspended' }>>('RunSuspendedEvent').implement({
  description: 'The run waits for approveRun(id, turnDigest, approved): nothing of this turn has run.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (event) => event.run }),
    turnDigest: t.string({ resolve: (event) => event.turn.digest }),
    pendingCalls: t.field({ type: [PendingToolCallRef], resolve: (event) => pendingCallsOf(event.turn) }),
  }),
});

const RunStartedEventRef = builder.objectRef<Extract<ClientEvent, { kind: 'started' }>>('RunStartedEvent').implement({
  fields: (t) => ({ run: t.field({ type: RunRef, resolve: (event) => event.run }) }),
});
const RunStepEventRef = builder.objectRef<Extract<ClientEvent, { kind: 'step' }>>('RunStepEvent').implement({
  fields: (t) => ({
    runId: t.id({ resolve: (event) => encodeGlobalID('Run', event.view.runId) }),
    step: t.field({ type: RunStepRef, resolve: (event) => event.view }),
  }),
});
const RunFinishedEventRef = builder.objectRef<Extract<ClientEvent, { kind: 'finished' }>>('RunFinishedEvent').implement({
  fields: (t) => ({ run: t.field({ type: RunRef, resolve: (event) => event.run }) }),
});
const RunEventUnion = builder.unionType('RunEvent', {
  types: [RunStartedEventRef, RunStepEventRef, RunSuspendedEventRef, RunFinishedEventRef],
  resolveType: (event) =>
    ({ started: RunStartedEventRef, step: RunStepEventRef, suspended: RunSuspendedEventRef, finished: RunFinishedEventRef })[event.kind],
});

async function loadRun(context: Context, runId: string): Promise<RunRow> {
  const [run] = await findRunsByIds(context.services.db, [runId]);
  if (!run) throw new NotFoundError('Run', runId);
  return run;
}

/**
 * The client event of a bus step, one object per (bus event, admin or not): every subscriber that
 * sees the same copy gets the same object, so its execution is shared (graphql/shared-execution.ts).
 */
const stepEvents = new WeakMap<object, { admin?: ClientEvent; filtered?: ClientEvent }>();
function stepEventFor(event: Extract<RunBusEvent<RunRow>, { type: 'step' }>, admin: boolean): ClientEvent {
  let views = stepEvents.get(event);
  if (!views) stepEvents.set(event, (views = {}));
  const slot = admin ? 'admin' : 'filtered';
  return (views[slot] ??= { kind: 'step', view: { runId: event.runId, sequence: event.sequence, step: admin ? event.full : event.filtered } });
}

/**
 * Turns bus events into client events for one viewer: admins get the live steps verbatim, everyone
 * else the copy at the run's privacy level. Steps at or below `lastSequence` were already sent
 * (replay) and are skipped; steps missing before a live one are replayed from storage. The initiator and admins receive the live final answer even when the
 * privacy level does not store it. Ends when the run finished (or parked, with `endOnSuspension`)
 * or when `events` was released.
 */
async function* streamRun(
  context: Context,
  runId: string,
  events: AsyncIterable<RunBusEvent<RunRow>>,
  options: { lastSequence?: number; endOnSuspension?: boolean; startedRun?: RunRow } = {},
): AsyncGenerator<ClientEvent> {
  const viewer = context.viewer!;
  let lastSequence = options.lastSequence ?? 0;
  for await (const event of events) {
    if (event.type === 'started') {
      yield { kind: 'started', run: options.startedRun ?? event.run };
    } else if (event.type === 'step') {
      if (event.sequence <= lastSequence) continue;
      // A step that skips ahead means live events were lost on the way from another instance
      // (Redis dropped them): the missing ones are stored (a step is published after its commit).
      if (event.sequence > lastSequence + 1) {
        for (const { sequence, step } of await context.services.runs.replay(runId, lastSequence)) {
          if (sequence >= event.sequence) break;
          yield { kind: 'step', view: { runId, sequence, step } };
        }
      }
      lastSequence = event.sequence;
      yield stepEventFor(event, viewer.isAdmin);
    } else if (event.type === 'suspended') {
      yield { kind: 'suspended', run: event.run, turn: event };
      // A parked run belongs to no connection: runAgent ends here (leaving does not cancel it);
      // runEvents keeps streaming through the resume.
      if (options.endOnSuspension) return;
    } else if (event.type === 'decided') {
      continue; // the APPROVAL step that follows tells the decision
    } else {
      const run = event.run ?? (await loadRun(context, runId));
      const mayReadAnswer = viewer.isAdmin || run.user_id === viewer.id;
      yield { kind: 'finished', run: mayReadAnswer ? { ...run, final_content: event.finalContent } : run };
      return;
    }
  }
}

/**
 * A run stream. `release` runs exactly once, as soon as the stream ends: `endedEarly` is false
 * only when the stream reached its end by itself, true when the client completed or disconnected
 * (or the stream failed). An async generator defers `return()` until its pending `next()` settles
 * (for a run stream: the next bus event, seconds away) and ignores it before the first `next()`,
 * so `return()` releases first (unsubscribing from the bus ends the pending `next()`).
 *
 * Why not graphql-yoga's Repeater: we built the streams on it and measured workload 2 (1 000
 * `runEvents` subscribers): the server's CPU for the same 31 000 deliveries rose from 4.6 s to
 * 6.2–7.7 s and the p99 lag from 1.84 × to 2.2–2.4 × the raw `ws` broadcast, because every event
 * then crossed the Repeater's push and pull promises on top of the generator's own.
 */
function runStream(stream: AsyncGenerator<ClientEvent>, release: (endedEarly: boolean) => unknown): AsyncGenerator<ClientEvent> {
  let released = false;
  const releaseOnce = async (endedEarly: boolean) => {
    if (released) return;
    released = true;
    await release(endedEarly);
  };
  const wrapped: AsyncGenerator<ClientEvent> = {
    next: async (...args) => {
      try {
        const result = await stream.next(...args);
        if (result.done) await releaseOnce(false);
        return result;
      } catch (error) {
        await releaseOnce(true);
        throw error;
      }
    },
    return: async (value) => {
      await releaseOnce(true);
      return stream.return(value);
    },
    throw: async (error) => {
      await releaseOnce(true);
      return stream.throw(error);
    },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

const SETTLED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

builder.subscriptionType({ authScopes: { user: true } });

builder.subscriptionFields((t) => ({
  runAgent: t.field({
    type: RunEventUnion,
    description: 'Starts a run and streams it: RunStartedEvent, one RunStepEvent per step, then RunFinishedEvent.',
    args: { input: t.arg({ type: RunAgentInput, required: true }) },
    subscribe: async (_root, { input }, context) => {
      const started = await context.services.runs.start(context.viewer!, runInputOf(input));
      return runStream(
        streamRun(context, started.run.id, started.events, { endOnSuspension: true, startedRun: started.run }),
        (endedEarly) => {
          void started.events.return?.();
          if (endedEarly) started.cancel();
        },
      );
    },
    resolve: (event: ClientEvent) => event,
  }),
  runEvents: t.field({
    type: RunEventUnion,
    description: 'Replays the stored steps of a run, then continues live while it runs (no gap, no duplicate).',
    args: { runId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, context) => {
      const runId = decodeIdFor('Run', args.runId);
      const visible = await visibleRun(context.services.db, context.viewer!, runId);
      if (!visible) throw new NotFoundError('Run', String(args.runId));
      const events = context.services.runs.subscribe(runId);
      let stored;
      let current;
      try {
        stored = await context.services.runs.replay(runId, 0);
        current = await loadRun(context, runId);
      } catch (error) {
        await events.return?.();
        throw error;
      }
      const replayThenLive = async function* (): AsyncGenerator<ClientEvent> {
        yield { kind: 'started', run: current };
        let lastSequence = 0;
        for (const { sequence, step } of stored) {
          lastSequence = sequence;
          yield { kind: 'step', view: { runId, sequence, step } };
        }
        if (SETTLED.has(current.status)) {
          yield { kind: 'finished', run: current };
          return;
        }
        const waiting = context.services.runs.suspendedState(current);
        if (waiting) yield { kind: 'suspended', run: current, turn: waiting.suspension };
        yield* streamRun(context, runId, events, { lastSequence });
      };
      return runStream(replayThenLive(), () => events.return?.());
    },
    resolve: (event: ClientEvent) => event,
  }),
}));


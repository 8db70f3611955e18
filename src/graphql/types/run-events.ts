import { encodeGlobalID } from '@pothos/plugin-relay';
import type { Context } from '../../context.ts';
import type { RunRow } from '../../db/database.ts';
import { findRunsByIds } from '../../db/repositories/runs.ts';
import { NotFoundError } from '../../errors.ts';
import type { RunBusEvent } from '../../runtime/events.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../ids.ts';
import { pendingCallsOf, PendingToolCallRef, type PendingTurn } from './approvals.ts';
import { RunStepRef, type StepView } from './run-steps.ts';
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

const RunAgentInput = builder.inputType('RunAgentInput', {
  fields: (t) => ({
    configurationId: t.id({ required: true }),
    prompt: t.string({ required: true }),
    tools: t.stringList({ description: "The run's own tool selection, intersected with the configuration's allow-list." }),
  }),
});

async function loadRun(context: Context, runId: string): Promise<RunRow> {
  const [run] = await findRunsByIds(context.services.db, [runId]);
  if (!run) throw new NotFoundError('Run', runId);
  return run;
}

/**
 * Turns bus events into client events for one viewer: admins get the live steps verbatim, everyone
 * else the copy at the run's privacy level. Steps at or below `lastSequence` were already sent
 * (replay) and are skipped. The initiator and admins receive the live final answer even when the
 * privacy level does not store it. Leaving early (client `complete` or disconnect) runs `onLeave`.
 */
async function* streamRun(
  context: Context,
  runId: string,
  events: AsyncIterableIterator<RunBusEvent>,
  options: { lastSequence?: number; onLeave?: () => void; endOnSuspension?: boolean; startedRun?: RunRow } = {},
): AsyncGenerator<ClientEvent> {
  const viewer = context.viewer!;
  let lastSequence = options.lastSequence ?? 0;
  let finished = false;
  try {
    for await (const event of events) {
      if (event.type === 'started') {
        yield { kind: 'started', run: options.startedRun ?? (await loadRun(context, runId)) };
      } else if (event.type === 'step') {
        if (event.sequence <= lastSequence) continue;
        lastSequence = event.sequence;
        yield { kind: 'step', view: { runId, sequence: event.sequence, step: viewer.isAdmin ? event.full : event.filtered } };
      } else if (event.type === 'suspended') {
        yield { kind: 'suspended', run: await loadRun(context, runId), turn: event };
        // A parked run belongs to no connection: runAgent ends here (leaving does not cancel it);
        // runEvents keeps streaming through the resume.
        if (options.endOnSuspension) {
          finished = true;
          return;
        }
      } else {
        finished = true;
        const run = await context.services.runs.finishedRun(runId);
        if (!run) throw new NotFoundError('Run', runId);
        const mayReadAnswer = viewer.isAdmin || run.user_id === viewer.id;
        yield { kind: 'finished', run: mayReadAnswer ? { ...run, final_content: event.finalContent } : run };
        return;
      }
    }
  } finally {
    await events.return?.();
    if (!finished) options.onLeave?.();
  }
}

/**
 * A client that completes or drops a run stream must stop it at once, but an async generator defers
 * `return()` until its pending `next()` settles (for a run stream: the next bus event, seconds away)
 * and ignores it entirely before the first `next()` (its `finally` never runs). So `return()` first
 * calls `release` (unsubscribe from the bus, which ends the pending `next()`; cancel the run), unless
 * the stream already ended by itself.
 */
function releasedOnReturn<T>(stream: AsyncGenerator<T>, release: () => Promise<unknown> | void): AsyncGenerator<T> {
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await release();
  };
  const wrapped: AsyncGenerator<T> = {
    next: async (...args) => {
      const result = await stream.next(...args);
      if (result.done) ended = true;
      return result;
    },
    return: async (value) => {
      await end();
      return stream.return(value);
    },
    throw: async (error) => {
      await end();
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
      const started = await context.services.runs.start(context.viewer!, {
        ...input,
        configurationId: decodeIdFor('Configuration', input.configurationId),
      });
      return releasedOnReturn(streamRun(context, started.run.id, started.events, { onLeave: started.cancel, endOnSuspension: true, startedRun: started.run }), async () => {
        await started.events.return?.();
        started.cancel();
      });
    },
    resolve: (event: ClientEvent) => event,
  }),
  runEvents: t.field({
    type: RunEventUnion,
    description: 'Replays the stored steps of a run, then continues live while it runs (no gap, no duplicate).',
    args: { runId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, context) => {
      const runId = decodeIdFor('Run', args.runId);
      const visible = await context.services.runs.visibleRun(context.viewer!, runId);
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
        try {
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
        } finally {
          await events.return?.();
        }
      };
      return releasedOnReturn(replayThenLive(), () => events.return?.());
    },
    resolve: (event: ClientEvent) => event,
  }),
}));


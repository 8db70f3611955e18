import { encodeGlobalID } from '@pothos/plugin-relay';
import { Repeater } from 'graphql-yoga';
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
 * privacy level does not store it. Returns when the run finished (or parked, with `endOnSuspension`)
 * or when `events` was released.
 */
async function streamRun(
  context: Context,
  runId: string,
  events: AsyncIterable<RunBusEvent<RunRow>>,
  push: (event: ClientEvent) => Promise<unknown>,
  options: { lastSequence?: number; endOnSuspension?: boolean; startedRun?: RunRow } = {},
): Promise<void> {
  const viewer = context.viewer!;
  let lastSequence = options.lastSequence ?? 0;
  for await (const event of events) {
    if (event.type === 'started') {
      await push({ kind: 'started', run: options.startedRun ?? (await loadRun(context, runId)) });
    } else if (event.type === 'step') {
      if (event.sequence <= lastSequence) continue;
      lastSequence = event.sequence;
      await push({ kind: 'step', view: { runId, sequence: event.sequence, step: viewer.isAdmin ? event.full : event.filtered } });
    } else if (event.type === 'suspended') {
      await push({ kind: 'suspended', run: event.run, turn: event });
      // A parked run belongs to no connection: runAgent ends here (leaving does not cancel it);
      // runEvents keeps streaming through the resume.
      if (options.endOnSuspension) return;
    } else {
      const run = event.run ?? (await loadRun(context, runId));
      const mayReadAnswer = viewer.isAdmin || run.user_id === viewer.id;
      await push({ kind: 'finished', run: mayReadAnswer ? { ...run, final_content: event.finalContent } : run });
      return;
    }
  }
}

/**
 * A run stream. `release` runs exactly once, as soon as the stream ends: `endedEarly` is false
 * only when `produce` reached the end by itself, true when the client completed or disconnected
 * (or the stream failed). Repeater settles a pending `next()` at once on `return()`, where an async
 * generator would wait for the next bus event; but it never starts its executor when `return()`
 * comes before the first `next()` (graphql-ws does that when the client completes while
 * `subscribe` is still resolving), so `return()` releases the stream itself.
 */
function runStream(
  produce: (push: (event: ClientEvent) => Promise<unknown>) => Promise<void>,
  release: (endedEarly: boolean) => unknown,
): Repeater<ClientEvent> {
  let released = false;
  const releaseOnce = (endedEarly: boolean) => {
    if (released) return;
    released = true;
    void release(endedEarly);
  };
  const stream = new Repeater<ClientEvent>(async (push, stop) => {
    try {
      await produce(push);
      releaseOnce(false);
      stop();
    } catch (error) {
      releaseOnce(true);
      stop(error);
    }
  });
  const returnStream = stream.return.bind(stream);
  stream.return = (value) => {
    releaseOnce(true);
    return returnStream(value);
  };
  return stream;
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
      return runStream(
        (push) => streamRun(context, started.run.id, started.events, push, { endOnSuspension: true, startedRun: started.run }),
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
      return runStream(
        async (push) => {
          await push({ kind: 'started', run: current });
          let lastSequence = 0;
          for (const { sequence, step } of stored) {
            lastSequence = sequence;
            await push({ kind: 'step', view: { runId, sequence, step } });
          }
          if (SETTLED.has(current.status)) {
            await push({ kind: 'finished', run: current });
            return;
          }
          const waiting = context.services.runs.suspendedState(current);
          if (waiting) await push({ kind: 'suspended', run: current, turn: waiting.suspension });
          await streamRun(context, runId, events, push, { lastSequence });
        },
        () => events.return?.(),
      );
    },
    resolve: (event: ClientEvent) => event,
  }),
}));


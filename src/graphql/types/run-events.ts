import { decodeIdFor, encodeGlobalId } from '../../global-id.ts';
import { RESUME_REASONS } from '../../runtime/events.ts';
import { followRun, startAndFollowRun, type RunStreamEvent } from '../../services/run-stream.ts';
import { builder } from '../builder.ts';
import { pendingCallsOf, PendingToolCallRef } from './approvals.ts';
import { RunStepRef } from './run-steps.ts';
import { RunAgentInput, runInputOf } from './run-start.ts';
import { RunRef } from './runs.ts';

/** `publishedAt` of the run events and of RunUpdate: the bus's publication time of what arrives live. */
export const PUBLISHED_AT_DESCRIPTION =
  'When the instance that ran the step published this event on the bus (its clock, ms precision); null for what is replayed from storage (a step stored before the subscription, a gap filled from storage) and for a feed\'s snapshot rows.';
export const publishedAtOf = (event: { readonly publishedAt: number | null }): Date | null => (event.publishedAt === null ? null : new Date(event.publishedAt));

const RunSuspendedEventRef = builder.objectRef<Extract<RunStreamEvent, { kind: 'suspended' }>>('RunSuspendedEvent').implement({
  description: 'The run waits for approveRun(id, turnDigest, approved): nothing of this turn has run.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (event) => event.run }),
    turnDigest: t.string({ resolve: (event) => event.turn.digest }),
    pendingCalls: t.field({ type: [PendingToolCallRef], resolve: (event) => pendingCallsOf(event.turn) }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});

const RunStartedEventRef = builder.objectRef<Extract<RunStreamEvent, { kind: 'started' }>>('RunStartedEvent').implement({
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (event) => event.run }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});
const RunStepEventRef = builder.objectRef<Extract<RunStreamEvent, { kind: 'step' }>>('RunStepEvent').implement({
  fields: (t) => ({
    runId: t.id({ resolve: (event) => encodeGlobalId('Run', event.view.runId) }),
    step: t.field({ type: RunStepRef, resolve: (event) => event.view }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});
const RunFinishedEventRef = builder.objectRef<Extract<RunStreamEvent, { kind: 'finished' }>>('RunFinishedEvent').implement({
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (event) => event.run }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});
const ResumeReasonEnum = builder.enumType('ResumeReason', {
  values: RESUME_REASONS,
  description: 'LEASE_EXPIRED: the process running the run stopped answering; HANDED_OVER: it stopped gracefully; RESTARTED: the embedded database was reopened.',
});
const RunResumedEventRef = builder.objectRef<Extract<RunStreamEvent, { kind: 'resumed' }>>('RunResumedEvent').implement({
  description: 'Another process took the run over from its last checkpoint: its steps continue at fromSequence, with no gap and no duplicate.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (event) => event.run }),
    fromSequence: t.int({ resolve: (event) => event.fromSequence }),
    reason: t.field({ type: ResumeReasonEnum, resolve: (event) => event.reason }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});
const RunEventUnion = builder.unionType('RunEvent', {
  types: [RunStartedEventRef, RunStepEventRef, RunSuspendedEventRef, RunFinishedEventRef, RunResumedEventRef],
  resolveType: (event) =>
    ({ started: RunStartedEventRef, step: RunStepEventRef, suspended: RunSuspendedEventRef, finished: RunFinishedEventRef, resumed: RunResumedEventRef })[event.kind],
});

builder.subscriptionType({ authScopes: { user: true } });

builder.subscriptionFields((t) => ({
  runAgent: t.field({
    type: RunEventUnion,
    description: 'Starts a run and streams it: RunStartedEvent, one RunStepEvent per step, then RunFinishedEvent.',
    args: { input: t.arg({ type: RunAgentInput, required: true }) },
    subscribe: (_root, { input }, context) => startAndFollowRun(context, context.viewer!, runInputOf(input)),
    resolve: (event: RunStreamEvent) => event,
  }),
  runEvents: t.field({
    type: RunEventUnion,
    description: 'Replays the stored steps of a run, then continues live while it runs (no gap, no duplicate).',
    args: { runId: t.arg.id({ required: true }) },
    subscribe: (_root, args, context) => followRun(context, context.viewer!, decodeIdFor('Run', args.runId)),
    resolve: (event: RunStreamEvent) => event,
  }),
}));

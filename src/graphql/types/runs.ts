import { encodeGlobalID } from '@pothos/plugin-relay';
import type { Context } from '../../context.ts';
import type { RunRow } from '../../db/database.ts';
import { RUN_STATUSES, STEP_KINDS, TERMINATION_REASONS } from '../../runtime/run.ts';
import { findRunsByIds, listRuns, listRunSteps } from '../../db/repositories/runs.ts';
import { ConflictError, ForbiddenError, NotFoundError, StaleApprovalError, ValidationError } from '../../errors.ts';
import type { RunBusEvent } from '../../runtime/events.ts';
import type { StoredStep } from '../../runtime/privacy.ts';
import type { PendingCallPreview } from '../../runtime/approval.ts';
import type { ToolCall } from '../../runtime/llm.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../ids.ts';
import { ConfigurationRef, PrivacyLevelEnum } from './configurations.ts';
import { UserRef } from './users.ts';

export const RunStatusEnum = builder.enumType('RunStatus', { values: RUN_STATUSES });
const TerminationReasonEnum = builder.enumType('TerminationReason', { values: TERMINATION_REASONS });
const RunStepKindEnum = builder.enumType('RunStepKind', { values: STEP_KINDS });

// ── artifacts: a union with an Unknown fallback, so a shape the schema does not know (or one whose
// type was masked by the redactor) is served as data, never as an error.

type ClassifiedArtifact =
  | { readonly kind: 'table'; readonly label: string; readonly columns: string[]; readonly rows: string[][] }
  | { readonly kind: 'text'; readonly label: string; readonly text: string }
  | { readonly kind: 'unknown'; readonly type: string; readonly label: string; readonly data: unknown };

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

export function classifyArtifact(raw: unknown): ClassifiedArtifact {
  const artifact = (typeof raw === 'object' && raw !== null ? raw : {}) as { type?: unknown; label?: unknown; data?: unknown };
  const label = typeof artifact.label === 'string' ? artifact.label : '';
  const data = (typeof artifact.data === 'object' && artifact.data !== null ? artifact.data : {}) as Record<string, unknown>;
  if (artifact.type === 'table' && isStringArray(data.columns) && Array.isArray(data.rows) && data.rows.every(isStringArray)) {
    return { kind: 'table', label, columns: data.columns, rows: data.rows as string[][] };
  }
  if (artifact.type === 'text' && typeof data.text === 'string') return { kind: 'text', label, text: data.text };
  return { kind: 'unknown', type: typeof artifact.type === 'string' ? artifact.type : 'unknown', label, data: artifact.data ?? null };
}

const TableArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'table' }>>('TableArtifact').implement({
  fields: (t) => ({
    label: t.exposeString('label'),
    columns: t.exposeStringList('columns'),
    rows: t.field({ type: [['String']] as never, resolve: (artifact) => artifact.rows as never }),
  }),
});
const TextArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'text' }>>('TextArtifact').implement({
  fields: (t) => ({ label: t.exposeString('label'), text: t.exposeString('text') }),
});
const UnknownArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'unknown' }>>('UnknownArtifact').implement({
  description: 'An artifact of a shape this schema does not know; `data` carries it as JSON.',
  fields: (t) => ({
    type: t.exposeString('type'),
    label: t.exposeString('label'),
    data: t.field({ type: 'JSON', nullable: true, resolve: (artifact) => artifact.data }),
  }),
});
const ArtifactUnion = builder.unionType('Artifact', {
  types: [TableArtifactRef, TextArtifactRef, UnknownArtifactRef],
  resolveType: (artifact) => ({ table: TableArtifactRef, text: TextArtifactRef, unknown: UnknownArtifactRef })[artifact.kind],
});

// ── steps

interface StepView {
  readonly runId: string;
  readonly sequence: number;
  readonly step: StoredStep;
}

const StepUsageRef = builder.simpleObject('StepUsage', {
  fields: (t) => ({ promptTokens: t.int(), completionTokens: t.int(), cost: t.float() }),
});

const ApprovalDecisionRef = builder.simpleObject('ApprovalDecision', {
  description: 'A human decision on a turn that called a write tool, stored before any write ran.',
  fields: (t) => ({
    approverName: t.string(),
    approved: t.boolean(),
    turnDigest: t.string(),
    decidedAt: t.string(),
  }),
});

const RunStepRef = builder.objectRef<StepView>('RunStep').implement({
  description: 'One step of a run. Content fields are null when the privacy level dropped them (contentRedacted).',
  fields: (t) => ({
    sequence: t.int({ resolve: (view) => view.sequence }),
    kind: t.field({ type: RunStepKindEnum, resolve: (view) => view.step.kind }),
    round: t.int({ resolve: (view) => view.step.round }),
    durationMs: t.float({ nullable: true, resolve: (view) => view.step.durationMs ?? null }),
    content: t.string({ nullable: true, resolve: (view) => view.step.content ?? null }),
    thinking: t.string({ nullable: true, resolve: (view) => view.step.thinking ?? null }),
    messagesSent: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.messagesSent ?? null }),
    offeredTools: t.stringList({ nullable: true, resolve: (view) => view.step.offeredTools ?? null }),
    requestedToolCalls: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.requestedToolCalls ?? null }),
    finishReason: t.string({ nullable: true, resolve: (view) => view.step.finishReason ?? null }),
    toolCallId: t.string({ nullable: true, resolve: (view) => view.step.toolCallId ?? null }),
    toolName: t.string({ nullable: true, resolve: (view) => view.step.toolName ?? null }),
    toolArguments: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.toolArguments ?? null }),
    toolResult: t.string({ nullable: true, resolve: (view) => view.step.toolResult ?? null }),
    toolIsError: t.boolean({ nullable: true, resolve: (view) => view.step.toolIsError ?? null }),
    artifacts: t.field({
      type: [ArtifactUnion],
      nullable: true,
      description: 'Run-only output of a TOOL step; never sent to the model.',
      resolve: (view) => (Array.isArray(view.step.toolArtifacts) ? view.step.toolArtifacts.map(classifyArtifact) : null),
    }),
    contentRedacted: t.boolean({ resolve: (view) => view.step.contentRedacted }),
    contentLength: t.int({ nullable: true, resolve: (view) => view.step.contentLength ?? null }),
    toolResultLength: t.int({ nullable: true, resolve: (view) => view.step.toolResultLength ?? null }),
    toolArtifactsCount: t.int({ nullable: true, resolve: (view) => view.step.toolArtifactsCount ?? null }),
    toolArtifactTypes: t.stringList({ nullable: true, resolve: (view) => view.step.toolArtifactTypes ?? null }),
    requestedToolNames: t.stringList({ nullable: true, resolve: (view) => view.step.requestedToolNames ?? null }),
    messagesSentCount: t.int({ nullable: true, resolve: (view) => view.step.messagesSentCount ?? null }),
    usage: t.field({ type: StepUsageRef, nullable: true, resolve: (view) => view.step.usage ?? null }),
    approval: t.field({
      type: ApprovalDecisionRef,
      nullable: true,
      resolve: (view) =>
        view.step.approval
          ? {
              approverName: view.step.approval.approverName,
              approved: view.step.approval.approved,
              turnDigest: view.step.approval.digest,
              decidedAt: view.step.approval.decidedAt,
            }
          : null,
    }),
  }),
});

// ── runs

const RunUsageRef = builder.simpleObject('RunUsage', {
  fields: (t) => ({ promptTokens: t.int(), completionTokens: t.int(), totalTokens: t.int(), estimatedCost: t.float() }),
});

const canSee = (run: RunRow, context: Context) => context.viewer?.isAdmin === true || (context.viewer !== null && run.user_id === context.viewer.id);

export const RunRef = builder.loadableNode('Run', {
  id: { resolve: (run: RunRow) => run.id },
  load: (ids: string[], context) => findRunsByIds(context.services.db, ids),
  sort: (run) => run.id,
  // A non-admin sees only their own runs.
  authScopes: (run, context) => canSee(run, context),
  fields: (t) => ({
    status: t.field({ type: RunStatusEnum, resolve: (run) => run.status }),
    terminationReason: t.field({ type: TerminationReasonEnum, nullable: true, resolve: (run) => run.termination_reason as never }),
    truncated: t.exposeBoolean('truncated'),
    iterations: t.exposeInt('iterations'),
    prompt: t.exposeString('prompt', { nullable: true, description: 'null when the privacy level does not store content.' }),
    finalContent: t.exposeString('final_content', { nullable: true }),
    errorMessage: t.exposeString('error_message', { nullable: true }),
    privacyLevel: t.field({ type: PrivacyLevelEnum, resolve: (run) => run.privacy_level }),
    auditIncomplete: t.exposeBoolean('audit_incomplete', { description: 'Some steps or the outcome could not be stored.' }),
    usage: t.field({
      type: RunUsageRef,
      resolve: (run) => ({
        promptTokens: run.prompt_tokens,
        completionTokens: run.completion_tokens,
        totalTokens: run.prompt_tokens + run.completion_tokens,
        estimatedCost: run.estimated_cost,
      }),
    }),
    configuration: t.field({ type: ConfigurationRef, nullable: true, resolve: (run) => run.configuration_id }),
    user: t.field({ type: UserRef, nullable: true, resolve: (run) => run.user_id }),
    createdAt: t.field({ type: 'DateTime', resolve: (run) => run.created_at }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (run) => run.finished_at }),
    steps: t.connection({
      type: RunStepRef,
      resolve: async (run, args, context) => {
        const first = Math.min(Math.max(args.first ?? 50, 1), 500);
        const after = args.after ? decodeCursor(args.after, 'step') : '0';
        const rows = await listRunSteps(context.services.db, run.id, Number(after) || 0, first + 1);
        const page = rows.slice(0, first);
        return {
          edges: page.map((row) => ({
            cursor: encodeCursor('step', String(row.sequence)),
            node: { runId: run.id, sequence: row.sequence, step: row.payload as unknown as StoredStep },
          })),
          pageInfo: {
            hasNextPage: rows.length > first,
            hasPreviousPage: Number(after) > 0,
            startCursor: page[0] ? encodeCursor('step', String(page[0].sequence)) : null,
            endCursor: page.at(-1) ? encodeCursor('step', String(page.at(-1)!.sequence)) : null,
          },
        };
      },
    }),
  }),
});

function encodeCursor(kind: string, value: string): string {
  return Buffer.from(`${kind}:${value}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, kind: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(`${kind}:`)) throw new ValidationError('Invalid input: after: is not a cursor of this list', [{ path: ['after'], message: 'is not a cursor of this list' }]);
  return decoded.slice(kind.length + 1);
}

builder.queryFields((t) => ({
  runs: t.connection({
    type: RunRef,
    description: 'Newest first. A non-admin sees only their own runs.',
    args: { status: t.arg({ type: RunStatusEnum }) },
    resolve: async (_root, args, context) => {
      const first = Math.min(Math.max(args.first ?? 20, 1), 100);
      let after: { createdAt: Date; id: string } | null = null;
      if (args.after) {
        const [stamp, id] = decodeCursor(args.after, 'run').split('|');
        const createdAt = new Date(stamp ?? '');
        if (!id || Number.isNaN(createdAt.getTime())) throw new ValidationError('Invalid input: after: is not a cursor of this list');
        after = { createdAt, id };
      }
      const viewer = context.viewer!;
      const page = await listRuns(context.services.db, { userId: viewer.isAdmin ? null : viewer.id, status: args.status ?? null, first, after });
      const cursorOf = (run: RunRow) => encodeCursor('run', `${run.created_at.toISOString()}|${run.id}`);
      return {
        edges: page.rows.map((run) => ({ cursor: cursorOf(run), node: run })),
        pageInfo: {
          hasNextPage: page.hasNextPage,
          hasPreviousPage: after !== null,
          startCursor: page.rows[0] ? cursorOf(page.rows[0]) : null,
          endCursor: page.rows.at(-1) ? cursorOf(page.rows.at(-1)!) : null,
        },
      };
    },
  }),
  run: t.field({
    type: RunRef,
    nullable: true,
    args: { id: t.arg.globalID({ required: true, for: [RunRef] }) },
    resolve: async (_root, { id }, context) => ((await context.services.runs.visibleRun(context.viewer!, id.id)) ? id.id : null),
  }),
}));

builder.queryFields((t) => ({
  pendingApprovals: t.field({
    type: [PendingApprovalRef],
    description: 'Runs waiting for a decision: all of them for admins, your own otherwise.',
    resolve: async (_root, _args, context) =>
      (await context.services.runs.pendingApprovals(context.viewer!)).map(({ run, suspended }) => ({ run, turn: suspended.suspension })),
  }),
}));

builder.mutationFields((t) => ({
  approveRun: t.field({
    type: RunRef,
    errors: { types: [NotFoundError, StaleApprovalError, ConflictError, ForbiddenError] },
    description:
      'Decides the turn a run waits on. turnDigest must name that turn; approving needs that you could run every pending write yourself. The run resumes in the background (follow it with runEvents).',
    args: {
      id: t.arg.globalID({ required: true, for: [RunRef] }),
      turnDigest: t.arg.string({ required: true }),
      approved: t.arg.boolean({ required: true }),
    },
    resolve: (_root, args, context) => context.services.runs.decide(context.viewer!, args.id.id, args.turnDigest, args.approved),
  }),
  cancelRun: t.field({
    type: RunRef,
    errors: { types: [NotFoundError] },
    description: 'Cancels a running run at its next step boundary (owner or admin). Returns the run as stored now.',
    args: { id: t.arg.globalID({ required: true, for: [RunRef] }) },
    resolve: (_root, { id }, context) => context.services.runs.cancel(context.viewer!, id.id),
  }),
}));

// ── live events

interface PendingTurn {
  readonly digest: string;
  readonly calls: readonly ToolCall[];
  readonly previews: readonly PendingCallPreview[];
}

type ClientEvent =
  | { readonly kind: 'started'; readonly run: RunRow }
  | { readonly kind: 'step'; readonly view: StepView }
  | { readonly kind: 'suspended'; readonly run: RunRow; readonly turn: PendingTurn }
  | { readonly kind: 'finished'; readonly run: RunRow };

const PendingToolCallRef = builder.simpleObject('PendingToolCall', {
  description: 'A call of the waiting turn; none has run. Write calls carry a preview of the change.',
  fields: (t) => ({
    id: t.string(),
    name: t.string(),
    arguments: t.field({ type: 'JSON' }),
    preview: t.string({ nullable: true }),
  }),
});

const pendingCallsOf = (turn: PendingTurn) =>
  turn.calls.map((call) => ({
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    preview: turn.previews.find((preview) => preview.callId === call.id)?.preview ?? null,
  }));

const PendingApprovalRef = builder.objectRef<{ run: RunRow; turn: PendingTurn }>('PendingApproval').implement({
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (pending) => pending.run }),
    turnDigest: t.string({ resolve: (pending) => pending.turn.digest }),
    pendingCalls: t.field({ type: [PendingToolCallRef], resolve: (pending) => pendingCallsOf(pending.turn) }),
  }),
});

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


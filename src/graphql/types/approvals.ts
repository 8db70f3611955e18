import type { RunRow } from '../../db/database.ts';
import { ConflictError, ForbiddenError, NotFoundError, StaleApprovalError } from '../../errors.ts';
import type { ToolCall } from '../../runtime/llm.ts';
import { callOfPreview, type PendingCallPreview } from '../../runtime/approval.ts';
import { MAX_PENDING_APPROVALS, pendingApprovals } from '../../services/approvals.ts';
import { builder } from '../builder.ts';
import { listSizeExtensions } from '../plugins/query-cost.ts';
import { RunRef } from './runs.ts';

/** The turn a run waits on: none of its calls has run. */
export interface PendingTurn {
  readonly digest: string;
  readonly calls: readonly ToolCall[];
  readonly previews: readonly PendingCallPreview[];
}

export const PendingToolCallRef = builder.simpleObject('PendingToolCall', {
  description: 'A call of the waiting turn; none has run. Write calls carry a preview of the change.',
  fields: (t) => ({
    id: t.string(),
    name: t.string(),
    arguments: t.field({ type: 'JSON' }),
    preview: t.string({ nullable: true }),
  }),
});

export const pendingCallsOf = (turn: PendingTurn) =>
  turn.calls.map((call) => ({
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    preview: turn.previews.find((preview) => callOfPreview(turn.calls, preview) === call)?.preview ?? null,
  }));

const PendingApprovalRef = builder.objectRef<{ run: RunRow; turn: PendingTurn }>('PendingApproval').implement({
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (pending) => pending.run }),
    turnDigest: t.string({ resolve: (pending) => pending.turn.digest }),
    pendingCalls: t.field({ type: [PendingToolCallRef], resolve: (pending) => pendingCallsOf(pending.turn) }),
  }),
});

builder.queryFields((t) => ({
  pendingApprovals: t.field({
    type: [PendingApprovalRef],
    description: `Runs waiting for a decision, the oldest ${MAX_PENDING_APPROVALS}: all of them for admins, your own otherwise.`,
    // Costed as the list it can be (was costed as a list of 10 while it returned every waiting run).
    extensions: listSizeExtensions(() => MAX_PENDING_APPROVALS),
    resolve: async (_root, _args, context) =>
      (await pendingApprovals(context, context.viewer!)).map(({ run, suspended }) => ({ run, turn: suspended.suspension })),
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
    resolve: (_root, args, context) => context.runHost.decide(context.viewer!, args.id.id, args.turnDigest, args.approved),
  }),
}));

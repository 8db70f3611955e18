import type { RunRow } from '../../db/database.ts';
import { approvalRequests, FEED_SNAPSHOT_SIZE, runUpdates, type ApprovalRequest, type RunUpdate } from '../../services/run-feeds.ts';
import { builder } from '../builder.ts';
import { feedExtensions } from '../plugins/query-cost.ts';
import { pendingCallsOf, PendingToolCallRef } from './approvals.ts';
import { PUBLISHED_AT_DESCRIPTION, publishedAtOf } from './run-events.ts';
import { RunFilterInput, runFilterOf, RunRef } from './runs.ts';

const RunUpdateRef = builder.objectRef<RunUpdate>('RunUpdate').implement({
  description: 'A run of the live list: snapshot first (snapshot: true), then its changes, at most one per run per 250 ms; the last carries its final state.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (update) => update.run }),
    snapshot: t.boolean({ description: 'True for the runs listed when the subscription started; false for live changes.', resolve: (update) => update.snapshot }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, description: PUBLISHED_AT_DESCRIPTION, resolve: publishedAtOf }),
  }),
});

const ApprovalRequestKindEnum = builder.enumType('ApprovalRequestKind', {
  values: {
    WAITING: { description: 'The run waits for approveRun: pendingCalls and turnDigest say on what.' },
    DECIDED: { description: 'The turn was approved or denied (approved, decidedBy); the run runs on.' },
    CANCELLED: { description: 'The waiting run was cancelled; nothing of its turn ran.' },
  } as const,
});

const DeciderRef = builder.simpleObject('ApprovalDecider', {
  description: 'Who decided a turn (their name as it was then).',
  fields: (t) => ({ name: t.string() }),
});

const ApprovalRequestEventRef = builder.objectRef<ApprovalRequest & { snapshot?: boolean }>('ApprovalRequestEvent').implement({
  description: 'A change of the approvals queue, for a run the viewer may decide.',
  fields: (t) => ({
    kind: t.field({ type: ApprovalRequestKindEnum, resolve: (event) => event.kind }),
    run: t.field({ type: RunRef, resolve: (event): RunRow => event.run }),
    snapshot: t.boolean({ description: 'True for the runs waiting when the subscription started.', resolve: (event) => event.snapshot === true }),
    turnDigest: t.string({
      nullable: true,
      description: 'WAITING: the digest approveRun needs; DECIDED: the digest that was decided.',
      resolve: (event) => (event.kind === 'WAITING' ? event.turn.digest : event.kind === 'DECIDED' ? event.digest : null),
    }),
    pendingCalls: t.field({
      type: [PendingToolCallRef],
      nullable: true,
      description: 'WAITING: every call of the turn (none has run), write calls with their preview, as pendingApprovals gives them.',
      resolve: (event) => (event.kind === 'WAITING' ? pendingCallsOf(event.turn) : null),
    }),
    approved: t.boolean({ nullable: true, description: 'DECIDED: approved (true) or denied (false).', resolve: (event) => (event.kind === 'DECIDED' ? event.approved : null) }),
    decidedBy: t.field({ type: DeciderRef, nullable: true, resolve: (event) => (event.kind === 'DECIDED' ? { name: event.decidedBy.name } : null) }),
  }),
});

/**
 * Both feeds send up to FEED_SNAPSHOT_SIZE events at once when they start: they are costed for all
 * of them (query-cost.ts), and those events together are bounded like one response (response-size.ts).
 */
const LIST_FEED = feedExtensions({ snapshotSize: FEED_SNAPSHOT_SIZE, inSnapshot: (event) => (event as { snapshot?: boolean }).snapshot === true });

builder.subscriptionFields((t) => ({
  runUpdates: t.field({
    type: RunUpdateRef,
    description:
      'The live runs list: the runs matching filter now (newest first, at most 100; snapshot: true), then an update whenever one is created, changes status, makes progress (iterations, usage so far) or finishes — at most one per run per 250 ms, the last with its final state; a run that stops matching gets one last update. A non-admin sees their own runs. Subscribe again for a fresh snapshot.',
    args: { filter: t.arg({ type: RunFilterInput }) },
    extensions: LIST_FEED,
    subscribe: (_root, args, context) => runUpdates(context, runFilterOf(context, args.filter)),
    resolve: (update: RunUpdate) => update,
  }),
  approvalRequests: t.field({
    type: ApprovalRequestEventRef,
    description:
      'The live approvals queue for the runs you may decide (your own; an admin: all): the runs waiting now (oldest first, at most 100; snapshot: true), then WAITING, DECIDED and CANCELLED as they happen.',
    extensions: LIST_FEED,
    subscribe: (_root, _args, context) => approvalRequests(context, context.viewer!),
    resolve: (event: ApprovalRequest) => event,
  }),
}));

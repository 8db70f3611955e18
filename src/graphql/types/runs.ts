import type { Context } from '../../context.ts';
import type { RunRow } from '../../db/database.ts';
import { findRunsByIds, listRuns, listRunSteps } from '../../db/repositories/runs.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { RUN_STATUSES, TERMINATION_REASONS } from '../../runtime/loop.ts';
import type { StoredStep } from '../../runtime/privacy.ts';
import { builder } from '../builder.ts';
import { ConfigurationRef, PrivacyLevelEnum } from './configurations.ts';
import { RunStepRef } from './run-steps.ts';
import { UserRef } from './users.ts';

export const RunStatusEnum = builder.enumType('RunStatus', { values: RUN_STATUSES });
const TerminationReasonEnum = builder.enumType('TerminationReason', { values: TERMINATION_REASONS });

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

builder.mutationFields((t) => ({
  cancelRun: t.field({
    type: RunRef,
    errors: { types: [NotFoundError] },
    description: 'Cancels a running run at its next step boundary (owner or admin). Returns the run as stored now.',
    args: { id: t.arg.globalID({ required: true, for: [RunRef] }) },
    resolve: (_root, { id }, context) => context.services.runs.cancel(context.viewer!, id.id),
  }),
}));

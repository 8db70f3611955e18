import { resolveCursorConnection, type DefaultConnectionArguments } from '@pothos/plugin-relay';
import type { Context } from '../../context.ts';
import type { RunRow } from '../../db/database.ts';
import { countRuns, listRuns, type RunFilter, type RunKey } from '../../db/repositories/run-list.ts';
import { findRunsByIds, pageRunSteps } from '../../db/repositories/runs.ts';
import { runFilterFor } from '../../services/run-filter.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { RUN_KINDS, RUN_STATUSES, TERMINATION_REASONS, type RunKind, type RunStatus, type TerminationReason } from '../../runtime/run.ts';
import type { StoredStep } from '../../runtime/stored-step.ts';
import { builder } from '../builder.ts';
import { pageSizeExtensions, type PageSize } from '../plugins/query-cost.ts';
import { ConfigurationRef, PrivacyLevelEnum } from './configurations.ts';
import { RunStepRef, type StepView } from './run-steps.ts';
import { UserRef } from './users.ts';

export const RunStatusEnum = builder.enumType('RunStatus', { values: RUN_STATUSES });
const TerminationReasonEnum = builder.enumType('TerminationReason', { values: TERMINATION_REASONS });
const RunKindEnum = builder.enumType('RunKind', {
  values: RUN_KINDS,
  description: 'AGENT: the agent loop (runAgent, startRun). MCP: a session of an MCP client at /mcp, one TOOL step per tool call.',
});

const RunUsageRef = builder.simpleObject('RunUsage', {
  // Float: totals are stored as bigint and may pass 2^31 (GraphQL's Int is 32-bit); they stay exact below 2^53.
  fields: (t) => ({ promptTokens: t.float(), completionTokens: t.float(), totalTokens: t.float(), estimatedCost: t.float() }),
});

/** Page sizes of the two connections; `first`/`last` above `maxSize` is refused before anything runs. */
const RUN_PAGE: PageSize = { defaultSize: 20, maxSize: 100 };
const STEP_PAGE: PageSize = { defaultSize: 50, maxSize: 100 };

const canSee = (run: RunRow, context: Context) => context.viewer?.isAdmin === true || (context.viewer !== null && run.user_id === context.viewer.id);

export const RunRef = builder.loadableNode('Run', {
  id: { resolve: (run: RunRow) => run.id },
  // Another user's run loads as nothing, exactly like an unknown id: `node(id)` must not reveal
  // that it exists. The scope check stays for rows reached without the loader.
  load: async (ids: string[], context) => (await findRunsByIds(context.db, ids)).filter((run) => canSee(run, context)),
  sort: (run) => run.id,
  // A non-admin sees only their own runs.
  authScopes: (run, context) => canSee(run, context),
  fields: (t) => ({
    kind: t.field({ type: RunKindEnum, resolve: (run) => run.kind }),
    status: t.field({ type: RunStatusEnum, resolve: (run) => run.status }),
    terminationReason: t.field({ type: TerminationReasonEnum, nullable: true, resolve: (run) => run.termination_reason as never }),
    truncated: t.exposeBoolean('truncated'),
    iterations: t.exposeInt('iterations'),
    prompt: t.exposeString('prompt', { nullable: true, description: 'null when the privacy level does not store content.' }),
    finalContent: t.exposeString('final_content', { nullable: true }),
    errorMessage: t.exposeString('error_message', { nullable: true }),
    privacyLevel: t.field({ type: PrivacyLevelEnum, resolve: (run) => run.privacy_level }),
    auditIncomplete: t.exposeBoolean('audit_incomplete', { description: 'Some steps or the outcome could not be stored.' }),
    resumeCount: t.exposeInt('resume_count', {
      description: 'How many times another process took this run over after the one running it stopped (durable runs); its steps continue with no gap.',
    }),
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
      description: `Oldest first; ${STEP_PAGE.defaultSize} steps unless first or last says otherwise (at most ${STEP_PAGE.maxSize}).`,
      extensions: pageSizeExtensions(STEP_PAGE),
      resolve: (run, args, context) =>
        connectionPage(args, { ...STEP_PAGE, kind: 'step', key: (view: StepView) => String(view.sequence) }, async (page) => {
          const rows = await pageRunSteps(context.db, run.id, {
            ...page,
            after: page.after === null ? null : stepSequenceOf(page.after),
            before: page.before === null ? null : stepSequenceOf(page.before),
          });
          return rows.map((row) => ({ runId: run.id, sequence: row.sequence, step: row.payload as unknown as StoredStep }));
        }),
    }),
  }),
});

type CursorArgument = 'after' | 'before';

interface ConnectionPage<Node> {
  readonly edges: { cursor: string; node: Node }[];
  readonly pageInfo: { startCursor?: string | null; endCursor?: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
}
interface Cursor {
  readonly value: string;
  readonly argument: CursorArgument;
}

/**
 * A page of a keyset list through `resolveCursorConnection`. Cursors are `<kind>:<key>` in
 * base64url; a cursor of another list is a ValidationError naming its argument. As before the move
 * to Pothos's helper, a page holds at least one item (`first: 0` reads as 1) and an empty page has
 * null start and end cursors.
 */
async function connectionPage<Node>(
  args: DefaultConnectionArguments,
  list: { defaultSize: number; maxSize: number; kind: string; key: (node: Node) => string },
  load: (page: { after: Cursor | null; before: Cursor | null; limit: number; inverted: boolean }) => Promise<Node[]>,
): Promise<ConnectionPage<Node>> {
  const atLeastOne = (size: number | null | undefined) => (size == null ? size : Math.max(size, 1));
  const connection = await resolveCursorConnection<Promise<Node[]>>(
    {
      args: { ...args, first: atLeastOne(args.first), last: atLeastOne(args.last) },
      defaultSize: list.defaultSize,
      maxSize: list.maxSize,
      toCursor: (node: Node) => Buffer.from(`${list.kind}:${list.key(node)}`, 'utf8').toString('base64url'),
    },
    ({ after, before, limit, inverted }) =>
      load({
        after: after === undefined ? null : decodeCursor(after, list.kind, 'after'),
        before: before === undefined ? null : decodeCursor(before, list.kind, 'before'),
        limit,
        inverted,
      }),
  );
  const edges = connection.edges as { cursor: string; node: Node }[];
  if (edges.length > 0) return { edges, pageInfo: connection.pageInfo };
  return { edges, pageInfo: { ...connection.pageInfo, startCursor: null, endCursor: null } };
}

function decodeCursor(cursor: string, kind: string, argument: CursorArgument): Cursor {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(`${kind}:`)) throw invalidCursor(argument);
  return { value: decoded.slice(kind.length + 1), argument };
}

function invalidCursor(argument: CursorArgument): ValidationError {
  return new ValidationError(`Invalid input: ${argument}: is not a cursor of this list`, [{ path: [argument], message: 'is not a cursor of this list' }]);
}

function stepSequenceOf(cursor: Cursor): number {
  const sequence = Number(cursor.value);
  if (!Number.isSafeInteger(sequence)) throw invalidCursor(cursor.argument);
  return sequence;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A run cursor names a run (`run:<id>`; cursors of earlier versions, `run:<time>|<id>`, still work). */
function runKeyOf(cursor: Cursor): RunKey {
  const id = cursor.value.split('|').at(-1) ?? '';
  if (!UUID.test(id)) throw invalidCursor(cursor.argument);
  return { id };
}

export const RunFilterInput = builder.inputType('RunFilter', {
  description: 'Which runs to list or watch; every field narrows. A non-admin always gets their own runs (only admins may name userId).',
  fields: (t) => ({
    configurationId: t.globalID({ for: [ConfigurationRef] }),
    userId: t.globalID({ for: [UserRef], description: 'Admins only.' }),
    kind: t.field({ type: RunKindEnum, description: 'Agent runs or MCP sessions only.' }),
    status: t.field({ type: [RunStatusEnum], description: 'Any of these statuses.' }),
    terminationReason: t.field({ type: [TerminationReasonEnum], description: 'Any of these reasons (an open run has none).' }),
    createdFrom: t.field({ type: 'DateTime', description: 'Created at or after.' }),
    createdTo: t.field({ type: 'DateTime', description: 'Created before.' }),
  }),
});

type RunFilterArgument = {
  configurationId?: { id: string } | null;
  userId?: { id: string } | null;
  kind?: RunKind | null;
  status?: readonly RunStatus[] | null;
  terminationReason?: readonly TerminationReason[] | null;
  createdFrom?: Date | null;
  createdTo?: Date | null;
} | null | undefined;

/** The viewer's filter from the GraphQL argument (global ids decoded, the viewer's rule applied). */
export function runFilterOf(context: Context, filter: RunFilterArgument): RunFilter {
  return runFilterFor(context.viewer!, {
    ...filter,
    configurationId: filter?.configurationId?.id ?? null,
    userId: filter?.userId?.id ?? null,
  });
}

builder.queryFields((t) => ({
  runs: t.connection(
    {
      type: RunRef,
      description: `Newest first, filtered. A non-admin sees only their own runs. ${RUN_PAGE.defaultSize} runs unless first or last says otherwise (at most ${RUN_PAGE.maxSize}); last/before page backwards.`,
      extensions: pageSizeExtensions(RUN_PAGE),
      args: {
        filter: t.arg({ type: RunFilterInput }),
        status: t.arg({ type: RunStatusEnum, deprecationReason: 'Use filter: { status: [...] }.' }),
      },
      resolve: async (_root, args, context) => {
        const filter = runFilterOf(context, args.status ? { ...args.filter, status: [...(args.filter?.status ?? []), args.status] } : args.filter);
        const page = await connectionPage(args, { ...RUN_PAGE, kind: 'run', key: (run: RunRow) => run.id }, (window) =>
          listRuns(context.db, {
            filter,
            ...window,
            after: window.after === null ? null : runKeyOf(window.after),
            before: window.before === null ? null : runKeyOf(window.before),
          }),
        );
        return { ...page, countTotal: () => countRuns(context.db, filter) };
      },
    },
    {
      name: 'RunConnection',
      fields: (t) => ({
        totalCount: t.int({
          description: 'How many runs match the filter (all pages).',
          resolve: (connection) => (connection as unknown as { countTotal(): Promise<number> }).countTotal(),
        }),
      }),
    },
    { name: 'RunEdge' },
  ),
  run: t.field({
    type: RunRef,
    nullable: true,
    args: { id: t.arg.globalID({ required: true, for: [RunRef] }) },
    // The loader reads the run once and loads another user's run as nothing (null, as for an unknown id).
    resolve: (_root, { id }) => id.id,
  }),
}));

builder.mutationFields((t) => ({
  cancelRun: t.field({
    type: RunRef,
    errors: { types: [NotFoundError] },
    description: 'Cancels a running run at its next step boundary (owner or admin). Returns the run as stored now.',
    args: { id: t.arg.globalID({ required: true, for: [RunRef] }) },
    resolve: (_root, { id }, context) => context.runHost.cancel(context.viewer!, id.id),
  }),
}));

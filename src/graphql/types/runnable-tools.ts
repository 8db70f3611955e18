import { runnableTools, type RunnableTool, type RunnableToolGroup } from '../../services/tool-access.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../../global-id.ts';
import { ToolDenialReasonEnum } from './configurations.ts';

/** How much of a group a run would offer: what a group checkbox draws (SOME = the mixed state). */
const RUNNABLE_GROUP_STATES = ['ALL', 'SOME', 'NONE'] as const;
type RunnableGroupState = (typeof RUNNABLE_GROUP_STATES)[number];

const RunnableGroupStateEnum = builder.enumType('RunnableGroupState', {
  values: RUNNABLE_GROUP_STATES,
  description: 'ALL: every tool of the group is offered; SOME: only some (a checkbox in the mixed state); NONE: none.',
});

function groupState(group: RunnableToolGroup): RunnableGroupState {
  const offered = group.tools.filter((tool) => tool.offered).length;
  return offered === 0 ? 'NONE' : offered === group.tools.length ? 'ALL' : 'SOME';
}

const RunnableToolRef = builder.objectRef<RunnableTool>('RunnableTool').implement({
  description: 'A tool as a run of one configuration would see it for the viewer: offered, or the first gate that refuses it.',
  fields: (t) => ({
    name: t.string({ resolve: (entry) => entry.tool.name }),
    description: t.string({ resolve: (entry) => entry.tool.description }),
    group: t.string({ resolve: (entry) => entry.tool.group }),
    effect: t.string({ description: 'READ or WRITE (a WRITE call waits for approval).', resolve: (entry) => (entry.tool.effect ?? 'read').toUpperCase() }),
    requiresAdmin: t.boolean({ resolve: (entry) => entry.tool.requiresAdmin }),
    offered: t.exposeBoolean('offered', { description: 'A run with no selection of its own would offer it; tools/toolGroups can only narrow that.' }),
    refusedBy: t.field({
      type: ToolDenialReasonEnum,
      nullable: true,
      description: 'The FIRST gate that refuses it, in the order the gate checks (TOOL_DISABLED, REQUIRES_ADMIN, NOT_ALLOWED); null exactly when offered.',
      resolve: (entry) => entry.refusedBy,
    }),
    reason: t.string({ nullable: true, description: 'The refusal in words, with what would change it; null when offered.', resolve: (entry) => entry.reason }),
  }),
});

const RunnableToolGroupRef = builder.objectRef<RunnableToolGroup>('RunnableToolGroup').implement({
  description: 'A registered tool group as a run of one configuration would see it: its tools, each offered or refused, and how much of it is offered.',
  fields: (t) => ({
    name: t.exposeString('name'),
    enabled: t.exposeBoolean('enabled', { description: "The group's global switch (an admin's)." }),
    offered: t.field({ type: RunnableGroupStateEnum, resolve: groupState }),
    offeredCount: t.int({ description: 'How many of its tools are offered.', resolve: (group) => group.tools.filter((tool) => tool.offered).length }),
    tools: t.field({ type: [RunnableToolRef], resolve: (group) => [...group.tools] }),
  }),
});

builder.queryFields((t) => ({
  runnableTools: t.field({
    type: [RunnableToolGroupRef],
    description:
      "For the viewer: every registered group and tool, each offered by this configuration or refused by the first gate that refuses it (the gate's own decision). Draw a run's tool checkboxes from it; send the ticks as RunAgentInput.tools / toolGroups.",
    args: { configurationId: t.arg.id({ required: true }) },
    resolve: (_root, args, { db, registry, viewer }) =>
      runnableTools(db, registry, decodeIdFor('Configuration', args.configurationId), viewer!),
  }),
}));

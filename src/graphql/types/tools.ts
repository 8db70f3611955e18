import type { ToolGroupView, ToolView } from '../../services/tool-catalog.ts';
import * as catalog from '../../services/tool-catalog.ts';
import { builder } from '../builder.ts';

export const ToolRef = builder.objectRef<ToolView>('Tool').implement({
  description: 'A registered tool and its effective availability (groupEnabled && toolEnabled).',
  fields: (t) => ({
    name: t.string({ resolve: (view) => view.tool.name }),
    description: t.string({ resolve: (view) => view.tool.description }),
    group: t.string({ resolve: (view) => view.tool.group }),
    parameters: t.field({
      type: 'JSON',
      description: 'JSON Schema of the arguments, as offered to the model.',
      resolve: (view, _args, context) => context.registry.parametersSchema(view.tool.name) ?? {},
    }),
    enabled: t.exposeBoolean('enabled', { description: 'Effective: the group is enabled AND the tool is enabled.' }),
    toolEnabled: t.exposeBoolean('toolEnabled', { description: 'The override if any, else enabledByDefault.' }),
    groupEnabled: t.exposeBoolean('groupEnabled'),
    enabledByDefault: t.boolean({ resolve: (view) => view.tool.enabledByDefault }),
    overridden: t.exposeBoolean('overridden', { description: 'An admin override is stored for this tool.' }),
    requiresAdmin: t.boolean({ resolve: (view) => view.tool.requiresAdmin }),
    effect: t.string({ resolve: (view) => (view.tool.effect ?? 'read').toUpperCase() }),
  }),
});

export const ToolGroupRef = builder.objectRef<ToolGroupView>('ToolGroup').implement({
  description: 'A family of tools an admin can switch off as a whole. A group nobody switched is enabled.',
  fields: (t) => ({
    name: t.exposeString('name'),
    enabled: t.exposeBoolean('enabled'),
    overridden: t.exposeBoolean('overridden', { description: 'An admin switch is stored for this group.' }),
    tools: t.field({ type: [ToolRef], resolve: (group) => [...group.tools] }),
  }),
});

builder.queryFields((t) => ({
  toolGroups: t.field({
    type: [ToolGroupRef],
    resolve: (_root, _args, { db, registry }) => catalog.listToolGroups(db, registry),
  }),
  tools: t.field({
    type: [ToolRef],
    resolve: (_root, _args, { db, registry }) => catalog.listTools(db, registry),
  }),
}));

builder.mutationFields((t) => ({
  setToolGroupEnabled: t.field({
    type: ToolGroupRef,
    authScopes: { admin: true },
    description: 'Switches a whole group. A disabled group also covers tools installed later.',
    args: { name: t.arg.string({ required: true }), enabled: t.arg.boolean({ required: true }) },
    resolve: (_root, args, { db, registry }) => catalog.setToolGroupEnabled(db, registry, args.name, args.enabled),
  }),
  resetToolGroup: t.field({
    type: ToolGroupRef,
    authScopes: { admin: true },
    description: 'Forgets the switch of a group (it becomes enabled).',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, { db, registry }) => catalog.resetToolGroup(db, registry, args.name),
  }),
  setToolEnabled: t.field({
    type: ToolRef,
    authScopes: { admin: true },
    description: 'Overrides one tool. It can never re-enable a tool inside a disabled group.',
    args: { name: t.arg.string({ required: true }), enabled: t.arg.boolean({ required: true }) },
    resolve: (_root, args, { db, registry }) => catalog.setToolEnabled(db, registry, args.name, args.enabled),
  }),
  resetTool: t.field({
    type: ToolRef,
    authScopes: { admin: true },
    description: 'Forgets the override of a tool (it falls back to enabledByDefault).',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, { db, registry }) => catalog.resetTool(db, registry, args.name),
  }),
}));

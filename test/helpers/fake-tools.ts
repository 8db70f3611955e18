import { z } from 'zod';
import type { Tool, ToolEffect, ToolLookup } from '../../src/tools/tool.ts';

export interface FakeToolSpec {
  readonly name: string;
  readonly group?: string;
  readonly enabledByDefault?: boolean;
  readonly requiresAdmin?: boolean;
  readonly effect?: ToolEffect;
}

/** A tool for access-rule tests: no arguments, and calling it is a test failure. */
export function fakeTool(spec: FakeToolSpec): Tool {
  return {
    name: spec.name,
    description: `fake ${spec.name}`,
    group: spec.group ?? 'content',
    parameters: z.object({}),
    enabledByDefault: spec.enabledByDefault ?? true,
    requiresAdmin: spec.requiresAdmin ?? false,
    ...(spec.effect === undefined ? {} : { effect: spec.effect }),
    async execute() {
      throw new Error('not called');
    },
  };
}

/** A registry stand-in over `tools`, in the given order (no duplicate checking). */
export function fakeLookup(tools: readonly Tool[]): ToolLookup {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return { get: (name) => byName.get(name), all: () => tools };
}

/** A small slice of the built-in catalogue (DESIGN §9) with its real groups and flags. */
export function builtinLikeTools(): Tool[] {
  return [
    fakeTool({ name: 'read_records', group: 'content' }),
    fakeTool({ name: 'describe_tables', group: 'structure' }),
    fakeTool({ name: 'list_configurations', group: 'configuration' }),
    fakeTool({ name: 'get_env', group: 'system', requiresAdmin: true }),
    fakeTool({ name: 'get_env_raw', group: 'system', requiresAdmin: true, enabledByDefault: false }),
    fakeTool({ name: 'list_users', group: 'accounts', requiresAdmin: true }),
    fakeTool({ name: 'update_record', group: 'editing', enabledByDefault: false, effect: 'write' }),
  ];
}

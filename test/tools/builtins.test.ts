import { describe, expect, it } from 'vitest';
import { NO_ACTOR_ERROR } from '../../src/tools/builtin/actor-guard.ts';
import { builtinTools } from '../../src/tools/builtins.ts';
import { createRegistry } from '../../src/tools/registry.ts';
import type { Actor } from '../../src/tools/tool.ts';
import { toolContext, untouchableData } from './builtin/helpers.ts';

/** DESIGN section 9, in its order. */
const CATALOGUE = [
  { name: 'read_records', group: 'content', requiresAdmin: false, enabledByDefault: true, effect: 'read' },
  { name: 'describe_tables', group: 'structure', requiresAdmin: false, enabledByDefault: true, effect: 'read' },
  { name: 'list_configurations', group: 'configuration', requiresAdmin: false, enabledByDefault: true, effect: 'read' },
  { name: 'get_env', group: 'system', requiresAdmin: true, enabledByDefault: true, effect: 'read' },
  { name: 'get_env_raw', group: 'system', requiresAdmin: true, enabledByDefault: false, effect: 'read' },
  { name: 'get_runtime_info', group: 'system', requiresAdmin: true, enabledByDefault: true, effect: 'read' },
  { name: 'fetch_logs', group: 'system', requiresAdmin: true, enabledByDefault: true, effect: 'read' },
  { name: 'list_users', group: 'accounts', requiresAdmin: true, enabledByDefault: true, effect: 'read' },
  { name: 'list_users_raw', group: 'accounts', requiresAdmin: true, enabledByDefault: false, effect: 'read' },
  { name: 'update_record', group: 'editing', requiresAdmin: false, enabledByDefault: false, effect: 'write' },
] as const;

/** The smallest valid arguments of each tool. */
const MINIMAL_ARGS: Record<string, unknown> = {
  read_records: { table: 'customers' },
  update_record: { table: 'customers', key: { column: 'id', value: '1' }, changes: { name: 'Ada' } },
};

describe('builtinTools', () => {
  const registry = createRegistry([{ source: 'builtin', tools: builtinTools() }]);

  it('should register without duplicates, in the catalogue order', () => {
    expect(registry.all().map((tool) => tool.name)).toEqual(CATALOGUE.map((entry) => entry.name));
    expect(registry.groups()).toEqual(['content', 'structure', 'configuration', 'system', 'accounts', 'editing']);
  });

  it.each(CATALOGUE)('should flag $name: group $group, admin $requiresAdmin, on by default $enabledByDefault, effect $effect', (entry) => {
    const tool = registry.get(entry.name);
    expect(tool).toBeDefined();
    expect({ group: tool!.group, requiresAdmin: tool!.requiresAdmin, enabledByDefault: tool!.enabledByDefault }).toEqual({
      group: entry.group,
      requiresAdmin: entry.requiresAdmin,
      enabledByDefault: entry.enabledByDefault,
    });
    // Only a write asks for approval, and only a write describes itself to the approver first.
    expect(tool!.effect ?? 'read').toBe(entry.effect);
    expect(typeof tool!.preview === 'function').toBe(entry.effect === 'write');
    expect(typeof tool!.mayRun === 'function').toBe(entry.effect === 'write');
    expect(tool!.description.length).toBeGreaterThan(20);
  });

  it.each(CATALOGUE)('should describe every parameter of $name and refuse unknown ones', ({ name }) => {
    const schema = registry.parametersSchema(name)!;
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    for (const [property, definition] of Object.entries((schema.properties ?? {}) as Record<string, { description?: string }>)) {
      expect(definition.description, `${name}.${property}`).toMatch(/\w/);
    }
    expect(registry.get(name)!.parameters.safeParse({ ...(MINIMAL_ARGS[name] as object), surprise: 1 }).success).toBe(false);
  });

  it('should return a fresh list on every call', () => {
    expect(builtinTools()).not.toBe(builtinTools());
  });

  it.each(CATALOGUE)('$name should refuse a call without an acting user and read nothing', async ({ name }) => {
    const tool = registry.get(name)!;
    const { data, touched } = untouchableData();
    const args = tool.parameters.parse(MINIMAL_ARGS[name] ?? {});
    const result = await tool.execute(args, toolContext(data, null));
    expect(result.isError).toBe(true);
    expect(result.content).toBe(NO_ACTOR_ERROR);
    expect(touched).toEqual([]);
  });

  it.each(CATALOGUE.filter((entry) => entry.requiresAdmin))('$name should refuse a non-admin even past the gate', async ({ name }) => {
    const member: Actor = { id: 'm', name: 'member', isAdmin: false };
    const tool = registry.get(name)!;
    const { data, touched } = untouchableData();
    const result = await tool.execute(tool.parameters.parse({}), toolContext(data, member));
    expect(result.isError).toBe(true);
    expect(touched).toEqual([]);
  });
});

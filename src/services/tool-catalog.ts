import { describeAvailability, groupEnabled, type ToolState } from '../access/availability.ts';
import type { Db } from '../db/database.ts';
import * as toolState from '../db/repositories/tool-state.ts';
import { NotFoundError } from '../errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/tool.ts';
import { parseInput } from './validate.ts';
import { z } from 'zod';

export interface ToolView {
  readonly tool: Tool;
  readonly enabled: boolean;
  readonly toolEnabled: boolean;
  readonly groupEnabled: boolean;
  readonly overridden: boolean;
}

export interface ToolGroupView {
  readonly name: string;
  readonly enabled: boolean;
  /** True when an admin switch is stored for the group. */
  readonly overridden: boolean;
  readonly tools: readonly ToolView[];
}

export function viewTool(state: ToolState, tool: Tool): ToolView {
  return { tool, ...describeAvailability(state, tool) };
}

export function viewGroup(state: ToolState, registry: ToolRegistry, name: string): ToolGroupView {
  return {
    name,
    enabled: groupEnabled(state, name),
    overridden: state.groups.has(name),
    tools: registry
      .all()
      .filter((tool) => tool.group === name)
      .map((tool) => viewTool(state, tool)),
  };
}

/** Registered groups first (registry order), then groups that only exist as a stored switch. */
export async function listToolGroups(db: Db, registry: ToolRegistry): Promise<ToolGroupView[]> {
  const state = await toolState.loadToolState(db);
  const names = [...new Set([...registry.groups(), ...[...state.groups.keys()].sort()])];
  return names.map((name) => viewGroup(state, registry, name));
}

export async function listTools(db: Db, registry: ToolRegistry): Promise<ToolView[]> {
  const state = await toolState.loadToolState(db);
  return registry.all().map((tool) => viewTool(state, tool));
}

// Group names are free strings (a third-party group is just a new name), so any reasonable name
// may be switched, including one whose tools are installed later.
const groupName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export async function setToolGroupEnabled(db: Db, registry: ToolRegistry, name: string, enabled: boolean): Promise<ToolGroupView> {
  const group = parseInput(groupName, name);
  await toolState.saveGroupEnabled(db, group, enabled);
  return viewGroup(await toolState.loadToolState(db), registry, group);
}

export async function resetToolGroup(db: Db, registry: ToolRegistry, name: string): Promise<ToolGroupView> {
  const group = parseInput(groupName, name);
  await toolState.deleteGroupState(db, group);
  return viewGroup(await toolState.loadToolState(db), registry, group);
}

function registered(registry: ToolRegistry, name: string): Tool {
  const tool = registry.get(name);
  if (!tool) throw new NotFoundError(`Tool "${name.slice(0, 100)}"`, name);
  return tool;
}

export async function setToolEnabled(db: Db, registry: ToolRegistry, name: string, enabled: boolean): Promise<ToolView> {
  const tool = registered(registry, name);
  await toolState.saveToolEnabled(db, tool.name, enabled);
  return viewTool(await toolState.loadToolState(db), tool);
}

export async function resetTool(db: Db, registry: ToolRegistry, name: string): Promise<ToolView> {
  const tool = registered(registry, name);
  await toolState.deleteToolState(db, tool.name);
  return viewTool(await toolState.loadToolState(db), tool);
}

import type { Tool } from '../tools/tool.ts';

/**
 * The admin's global switches, as plain data (the repository loads them; this file only decides).
 *
 * - `groups`: enabled flag per group NAME. A missing entry means enabled, so a group nobody ever
 *   toggled (including a third-party group) is on, and a disabled group also covers tools that are
 *   installed after it was switched off.
 * - `tools`: override per tool name. A missing entry falls back to the tool's `enabledByDefault`.
 */
export interface ToolState {
  readonly groups: ReadonlyMap<string, boolean>;
  readonly tools: ReadonlyMap<string, boolean>;
}

/** The state of a fresh install: no group toggled, no tool overridden. */
export function emptyToolState(): ToolState {
  return { groups: new Map(), tools: new Map() };
}

/** The facts about a tool that availability depends on. */
export type AvailabilitySubject = Pick<Tool, 'name' | 'group' | 'enabledByDefault'>;

export interface AvailabilityDescription {
  /** Effective: `groupEnabled && toolEnabled`. */
  readonly enabled: boolean;
  readonly groupEnabled: boolean;
  /** The tool's own switch: its override, or `enabledByDefault` when there is none. */
  readonly toolEnabled: boolean;
  /** True when an admin override exists for the tool (whether or not it differs from the default). */
  readonly overridden: boolean;
}

/** A group is enabled unless it was explicitly switched off. */
export function groupEnabled(state: ToolState, group: string): boolean {
  return state.groups.get(group) ?? true;
}

/** The tool's own switch, ignoring its group. */
export function toolEnabled(state: ToolState, tool: Pick<Tool, 'name' | 'enabledByDefault'>): boolean {
  return state.tools.get(tool.name) ?? tool.enabledByDefault;
}

/**
 * Effective global availability. A disabled group wins over everything: a tool override can
 * NEVER re-enable a tool inside a disabled group.
 */
export function isAvailable(state: ToolState, tool: AvailabilitySubject): boolean {
  return groupEnabled(state, tool.group) && toolEnabled(state, tool);
}

/** The parts of the availability decision, for the admin API (`Tool.enabled / toolEnabled / groupEnabled / overridden`). */
export function describeAvailability(state: ToolState, tool: AvailabilitySubject): AvailabilityDescription {
  const group = groupEnabled(state, tool.group);
  const own = toolEnabled(state, tool);
  return {
    enabled: group && own,
    groupEnabled: group,
    toolEnabled: own,
    overridden: state.tools.has(tool.name),
  };
}

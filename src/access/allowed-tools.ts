import type { Tool } from '../tools/tool.ts';

/**
 * Which tools a configuration (and a run of it) may use, before the gate applies the global
 * switches and the actor's rights. Narrowing happens in three steps, each of which can only
 * shrink the list:
 *   1. skills: union of the lists declared by the effective skills,
 *   2. the configuration's `allowedToolGroups`,
 *   3. the run's own tool selection.
 *
 * An allow-list is a set of tool names, or `null` for "no restriction". `null` means "whatever the
 * gate lets through" (the ENABLED set), never "every registered tool"; the gate enforces that.
 */
export type AllowList = ReadonlySet<string> | null;

export interface SkillView {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly trustLevel: number;
  /** `null` = the skill has no opinion about tools; `[]` = the skill wants no tools at all. */
  readonly allowedTools: readonly string[] | null;
}

export interface ConfigurationView {
  /** Skills below this trust level are ignored entirely (they neither add prompt text nor tools). */
  readonly trustFloor: number;
  /** Empty = no group restriction. */
  readonly allowedToolGroups: readonly string[];
  readonly skills: readonly SkillView[];
}

/** The facts about a tool that group filtering depends on. */
export type GroupedTool = Pick<Tool, 'name' | 'group'>;

/**
 * The skills that take part in a run: enabled and at or above the trust floor, each id once.
 * The first occurrence of an id is authoritative, so a later duplicate can never revive a skill
 * whose first copy is disabled or below the floor.
 */
export function effectiveSkills(config: Pick<ConfigurationView, 'trustFloor' | 'skills'>): SkillView[] {
  const seen = new Set<string>();
  const result: SkillView[] = [];
  for (const skill of config.skills) {
    if (seen.has(skill.id)) continue;
    seen.add(skill.id);
    if (skill.enabled && skill.trustLevel >= config.trustFloor) result.push(skill);
  }
  return result;
}

/**
 * Step 1: the tools the skills ask for. `null` when no skill declares a list; otherwise the UNION
 * of the declared lists (so a lone declared `[]` yields the empty set: no tools).
 *
 * Pass the effective skills BEFORE any prompt-size trimming: a skill whose body is later dropped
 * to fit the prompt still contributes its tools, so trimming never changes what a run may call.
 */
export function skillAllowList(skills: readonly SkillView[]): AllowList {
  let union: Set<string> | null = null;
  for (const skill of skills) {
    if (skill.allowedTools === null) continue;
    union ??= new Set<string>();
    for (const name of skill.allowedTools) union.add(name);
  }
  return union;
}

/**
 * Step 2: restrict to the configuration's tool groups. No groups → `names` unchanged. Otherwise
 * the result is the tools (of `tools`, normally every registered tool) whose group is listed,
 * intersected with `names` when `names` is a list. A group no tool belongs to matches nothing.
 */
export function applyGroupFilter(
  names: AllowList,
  allowedToolGroups: readonly string[],
  tools: readonly GroupedTool[],
): AllowList {
  if (allowedToolGroups.length === 0) return names;
  const groups = new Set(allowedToolGroups);
  const result = new Set<string>();
  for (const tool of tools) {
    if (groups.has(tool.group) && (names === null || names.has(tool.name))) result.add(tool.name);
  }
  return result;
}

/**
 * Step 3: the run's own selection (`RunAgentInput.tools`). `null`/`undefined` → unchanged.
 * Otherwise the intersection; when the list so far is `null` the selection itself becomes the
 * list. That cannot widen anything: the gate still refuses names that are unregistered, disabled
 * or admin-only.
 */
export function applyRunSelection(list: AllowList, selection: readonly string[] | null | undefined): AllowList {
  if (selection === null || selection === undefined) return list;
  if (list === null) return new Set(selection);
  return new Set(selection.filter((name) => list.has(name)));
}

/**
 * The run's own selection as step 3 reads it: the named tools ∪ every tool of the named groups
 * (of `tools`, normally every registered tool), each name once, the named tools first. `null`
 * when neither list is given (the run selects nothing of its own); an empty list selects no tools.
 * Expanding cannot widen anything either: the result is still intersected (step 3) and gated.
 */
export function expandRunSelection(
  names: readonly string[] | null | undefined,
  groups: readonly string[] | null | undefined,
  tools: readonly GroupedTool[],
): string[] | null {
  if ((names === null || names === undefined) && (groups === null || groups === undefined)) return null;
  const selected = new Set(names ?? []);
  const ticked = new Set(groups ?? []);
  for (const tool of tools) if (ticked.has(tool.group)) selected.add(tool.name);
  return [...selected];
}

/** Steps 1 → 2 → 3 for one run of `config`; `tools` is every registered tool. */
export function resolveAllowedTools(
  config: ConfigurationView,
  tools: readonly GroupedTool[],
  selection?: readonly string[] | null,
): AllowList {
  const fromSkills = skillAllowList(effectiveSkills(config));
  const fromGroups = applyGroupFilter(fromSkills, config.allowedToolGroups, tools);
  return applyRunSelection(fromGroups, selection);
}

import { expandRunSelection, resolveAllowedTools, type ConfigurationView } from '../access/allowed-tools.ts';
import { groupEnabled } from '../access/availability.ts';
import { describeDenial, explain, type DenialReason, type GateInput, type ToolExplanation } from '../access/gate.ts';
import type { ConfigurationRow, Db } from '../db/database.ts';
import { findConfigurationsByIds, findSkillIdsOfConfigurations } from '../db/repositories/configurations.ts';
import { findSkillsByIds } from '../db/repositories/skills.ts';
import { loadToolState, type StoredToolState } from '../db/repositories/tool-state.ts';
import { NotFoundError, ValidationError, type FieldIssue } from '../errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Actor, Tool } from '../tools/tool.ts';

/**
 * The configuration as the access rules see it: its skills in attached order, groups, trust floor.
 * `knownSkillIds`: the configuration's skill ids when the caller already read them.
 */
export async function configurationView(db: Db, configuration: ConfigurationRow, knownSkillIds?: readonly string[]): Promise<ConfigurationView> {
  const skillIds = knownSkillIds ?? (await findSkillIdsOfConfigurations(db, [configuration.id])).get(configuration.id) ?? [];
  const rows = new Map((await findSkillsByIds(db, skillIds)).map((row) => [row.id, row]));
  return {
    trustFloor: configuration.trust_floor,
    allowedToolGroups: configuration.allowed_tool_groups,
    skills: skillIds.flatMap((id) => {
      const row = rows.get(id);
      return row
        ? [{ id: row.id, name: row.name, enabled: row.enabled, trustLevel: row.trust_level, allowedTools: row.allowed_tools }]
        : [];
    }),
  };
}

/**
 * Everything the gate needs to decide for one run: current switches, the actor, and the allow-list
 * of the configuration narrowed by the run's own selection. The loop offers with it and re-checks
 * every call against it; the API explains it.
 */
export async function gateInputFor(
  db: Db,
  registry: ToolRegistry,
  configuration: ConfigurationRow,
  actor: Actor | null,
  selection?: readonly string[] | null,
  /** What the caller already read (a run reads its whole setup in one statement). */
  known: { view?: Promise<ConfigurationView>; state?: StoredToolState } = {},
): Promise<GateInput> {
  const [view, state] = await Promise.all([known.view ?? configurationView(db, configuration), known.state ?? loadToolState(db)]);
  return { registry, state, actor, allowList: resolveAllowedTools(view, registry.all(), selection) };
}

/** Why each registered tool is or is not offered by this configuration to this actor. */
export async function explainConfiguration(
  db: Db,
  registry: ToolRegistry,
  configuration: ConfigurationRow,
  actor: Actor | null,
): Promise<ToolExplanation[]> {
  return explain(await gateInputFor(db, registry, configuration, actor));
}

/**
 * A run's own selection (`RunAgentInput.tools` ∪ the tools of `toolGroups`), expanded against the
 * registry. A name the registry does not know is refused by path (ValidationError), for tools and
 * groups alike: a typo must not silently run with fewer tools. `null` = no selection of its own.
 */
export function runSelectionOf(
  registry: ToolRegistry,
  tools: readonly string[] | null | undefined,
  toolGroups: readonly string[] | null | undefined,
): string[] | null {
  const groups = new Set(registry.groups());
  const issues: FieldIssue[] = [
    ...(tools ?? []).flatMap((name, index) =>
      registry.get(name) ? [] : [{ path: ['tools', String(index)], message: 'names no registered tool; query runnableTools(configurationId) for the names you may select' }],
    ),
    ...(toolGroups ?? []).flatMap((name, index) =>
      groups.has(name) ? [] : [{ path: ['toolGroups', String(index)], message: 'names no tool group; query runnableTools(configurationId) for the groups you may select' }],
    ),
  ];
  if (issues.length > 0) {
    throw new ValidationError(`Invalid input: ${issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`, issues);
  }
  return expandRunSelection(tools, toolGroups, registry.all());
}

/** One tool as a run of a configuration would see it, for the viewer: offered, or the first gate that refuses it. */
export interface RunnableTool {
  readonly tool: Tool;
  readonly offered: boolean;
  /** `null` exactly when offered. */
  readonly refusedBy: DenialReason | null;
  /** For a person: why it is refused and what would change that; `null` when offered. */
  readonly reason: string | null;
}

export interface RunnableToolGroup {
  readonly name: string;
  /** The group's global switch. */
  readonly enabled: boolean;
  readonly tools: readonly RunnableTool[];
}

/**
 * What a run of this configuration would offer the viewer with no selection of its own, per
 * registered group (registry order) and tool: the very decision the gate takes when the run starts
 * (`explain` runs the gate's own `checkGate` over the same input), so a UI draws its checkboxes
 * without re-implementing the cascade. A run's `tools`/`toolGroups` can only narrow this.
 * Admin-only tools are listed to everyone (as the `tools` query does), refused `requiresAdmin`.
 */
export async function runnableTools(db: Db, registry: ToolRegistry, configurationId: string, actor: Actor): Promise<RunnableToolGroup[]> {
  const [configuration] = await findConfigurationsByIds(db, [configurationId]);
  if (!configuration) throw new NotFoundError('Configuration', configurationId);
  const input = await gateInputFor(db, registry, configuration, actor);
  const explained = new Map(explain(input).map((explanation) => [explanation.toolName, explanation]));
  return registry.groups().map((group) => ({
    name: group,
    enabled: groupEnabled(input.state, group),
    tools: registry
      .all()
      .filter((tool) => tool.group === group)
      .map((tool) => {
        const { offered, reason } = explained.get(tool.name)!;
        return { tool, offered, refusedBy: reason, reason: reason === null ? null : describeDenial(reason, tool, input.state) };
      }),
  }));
}

import { expandRunSelection, resolveAllowedTools, type ConfigurationView } from '../access/allowed-tools.ts';
import { explain, type GateInput, type ToolExplanation } from '../access/gate.ts';
import type { ConfigurationRow, Db } from '../db/database.ts';
import { findSkillIdsOfConfigurations } from '../db/repositories/configurations.ts';
import { findSkillsByIds } from '../db/repositories/skills.ts';
import { loadToolState, type StoredToolState } from '../db/repositories/tool-state.ts';
import { ValidationError, type FieldIssue } from '../errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Actor } from '../tools/tool.ts';

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

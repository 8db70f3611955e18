// The Playground's tool checkboxes, drawn from runnableTools(configurationId): every registered
// group and tool, offered or refused with the reason, ticked by tool or by whole group.
import { useEffect, useRef } from 'preact/hooks';
import { RUNNABLE_TOOLS } from '../documents.ts';
import type { ConsoleRunnableToolsQuery } from '../gql/graphql.ts';
import { useQuery } from '../hooks/use-query.ts';

export type ToolGroup = ConsoleRunnableToolsQuery['runnableTools'][number];

/** The names of the tools a configuration offers (what a run with no selection of its own gets). */
export function offeredTools(groups: readonly ToolGroup[]): string[] {
  return groups.flatMap((group) => group.tools.filter((tool) => tool.offered).map((tool) => tool.name));
}

/**
 * The ticks as RunAgentInput's selection: a group whose offered tools are all ticked goes by its
 * name (so tools added to it later join), the rest tool by tool. Both lists empty = no tools.
 */
export function selectionOf(groups: readonly ToolGroup[], ticks: ReadonlySet<string>): { toolGroups: string[]; tools: string[] } {
  const wholeGroups = groups.filter((group) => {
    const names = group.tools.filter((tool) => tool.offered).map((tool) => tool.name);
    return names.length > 0 && names.every((name) => ticks.has(name));
  });
  const inGroups = new Set(wholeGroups.flatMap((group) => group.tools.map((tool) => tool.name)));
  return {
    toolGroups: wholeGroups.map((group) => group.name),
    tools: offeredTools(groups).filter((name) => ticks.has(name) && !inGroups.has(name)),
  };
}

/** A group's checkbox: checked when every offered tool is ticked, "mixed" when only some of the group is. */
function GroupCheckbox({ group, ticks, onToggle }: { group: ToolGroup; ticks: ReadonlySet<string>; onToggle: (group: ToolGroup, anyTicked: boolean) => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const offered = group.tools.filter((tool) => tool.offered);
  const count = offered.filter((tool) => ticks.has(tool.name)).length;
  const all = offered.length > 0 && count === offered.length;
  const mixed = (count > 0 && !all) || (all && group.offered === 'SOME');
  // `indeterminate` is a property only (no attribute), so it is set after each render.
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = mixed;
  });
  const id = `group-${group.name}`;
  return (
    <span class="group-check">
      <input ref={ref} type="checkbox" id={id} data-group={group.name} checked={all && !mixed} disabled={offered.length === 0} onChange={() => onToggle(group, count > 0)} />
      <label for={id}>
        Group <strong>{group.name}</strong> ({group.offeredCount} of {group.tools.length} offered{group.enabled ? '' : '; switched off'})
      </label>
    </span>
  );
}

interface ToolPickerProps {
  readonly configurationId: string;
  /** null until the tools have loaded and the page has chosen the first ticks. */
  readonly ticks: ReadonlySet<string> | null;
  readonly onTicks: (ticks: Set<string>) => void;
  /** The groups, once loaded: the page needs them to start the run and to choose the first ticks. */
  readonly onLoaded: (groups: readonly ToolGroup[]) => void;
}

/** Mounted once per configuration (keyed by its id), so an answer for another configuration never lands here. */
export function ToolPicker({ configurationId, ticks, onTicks, onLoaded }: ToolPickerProps) {
  const { data, error } = useQuery(RUNNABLE_TOOLS, { configurationId });
  const groups = data?.runnableTools ?? null;
  useEffect(() => {
    if (groups) onLoaded(groups);
  }, [groups]);
  const ticked = ticks ?? new Set<string>();

  const toggleTool = (name: string) => {
    const next = new Set(ticked);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    onTicks(next);
  };
  const toggleGroup = (group: ToolGroup, anyTicked: boolean) => {
    const next = new Set(ticked);
    for (const tool of group.tools) {
      if (anyTicked || !tool.offered) next.delete(tool.name);
      else next.add(tool.name);
    }
    onTicks(next);
  };

  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (groups === null) return <p role="status">Loading tools…</p>;
  if (groups.length === 0) return <p>No tool is registered.</p>;
  return (
    <>
      {groups.map((group) => (
        <div class="group" key={group.name}>
          <GroupCheckbox group={group} ticks={ticked} onToggle={toggleGroup} />
          <ul>
            {group.tools.map((tool) => {
              const id = `tool-${tool.name}`;
              return (
                <li key={tool.name}>
                  <input
                    type="checkbox"
                    id={id}
                    data-tool={tool.name}
                    checked={tool.offered && ticked.has(tool.name)}
                    disabled={!tool.offered}
                    aria-describedby={tool.offered ? undefined : `${id}-reason`}
                    onChange={() => toggleTool(tool.name)}
                  />
                  <label for={id}>
                    <code>{tool.name}</code> — {tool.description}
                  </label>
                  {tool.offered ? null : (
                    <span class="reason" id={`${id}-reason`}>
                      Not offered: {tool.reason ?? tool.refusedBy ?? 'refused'}
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </>
  );
}

// The tool switches with their cascade: a group off covers its tools; a tool's line says why it is
// off (its group, or its own switch) and offers a reset when it overrides the default.
import { RESET_TOOL, RESET_TOOL_GROUP } from '../../admin-documents.ts';
import { useAdminData } from '../../components/admin-section.tsx';
import { RowButton } from '../../components/row-actions.tsx';
import { Switch } from '../../components/switch.tsx';
import { SET_TOOL_ENABLED, SET_TOOL_GROUP_ENABLED, TOOL_GROUPS } from '../../documents.ts';
import type { ConsoleToolGroupsQuery } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';
import type { Document } from '../../session.ts';

type Tool = ConsoleToolGroupsQuery['toolGroups'][number]['tools'][number];

function why(tool: Tool, group: string): string {
  if (!tool.groupEnabled) return `Off because its group ${group} is switched off.`;
  if (!tool.toolEnabled) return 'Switched off.';
  return tool.requiresAdmin ? 'On (admins only).' : 'On.';
}

/** Every tool group and tool with its switch; `version` reloads them (an MCP server added its group, say). */
export function ToolSwitches({ version, setError }: { version: number; setError: (message: string) => void }) {
  const { session } = useSession();
  const { data, reload } = useAdminData(TOOL_GROUPS, version);
  const groups = data?.toolGroups ?? null;
  const run = <TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables) =>
    session.request(document, variables).then(reload, (failure: Error) => setError(failure.message));
  return (
    <section aria-labelledby="tools-heading">
      <h2 id="tools-heading">Tool groups and tools</h2>
      {groups === null ? (
        <p role="status">Loading…</p>
      ) : (
        groups.map((group) => (
          <div class="group" key={group.name}>
            <h3>
              <Switch id={`switch-group-${group.name}`} label={`Group ${group.name}`} checked={group.enabled} onChange={(enabled) => run(SET_TOOL_GROUP_ENABLED, { name: group.name, enabled })} />
              {group.overridden ? <> <RowButton text="Reset" row={`group ${group.name} to its default`} onClick={() => run(RESET_TOOL_GROUP, { name: group.name })} /></> : null}
            </h3>
            <ul>
              {group.tools.map((tool) => {
                const id = `switch-tool-${tool.name}`;
                return (
                  <li key={tool.name}>
                    <Switch id={id} label={tool.name} checked={tool.toolEnabled} describedBy={`${id}-why`} onChange={(enabled) => run(SET_TOOL_ENABLED, { name: tool.name, enabled })} />{' '}
                    <span class={tool.enabled ? 'why' : 'why off'} id={`${id}-why`}>
                      {why(tool, group.name)}
                    </span>{' '}
                    {tool.overridden ? <RowButton text="Reset" row={`${tool.name} to its default`} onClick={() => run(RESET_TOOL, { name: tool.name })} /> : null}{' '}
                    <span class="description">{tool.description}</span>
                  </li>
                );
              })}
            </ul>
          </div>
        ))
      )}
    </section>
  );
}

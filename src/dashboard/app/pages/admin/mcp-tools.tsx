// The tools one MCP server listed: each at its pinned definition, with its switches (offered at
// all, admins only), why it cannot be offered when it cannot, and a definition the remote changed
// since the pin shown as a diff beside the pinned one, to accept or reject.
import { ACCEPT_MCP_TOOL_CHANGE, REJECT_MCP_TOOL_CHANGE, SET_MCP_TOOL_ADMIN_ONLY } from '../../admin-documents.ts';
import { DefinitionDiff } from '../../components/definition-diff.tsx';
import { RowButton } from '../../components/row-actions.tsx';
import { Switch } from '../../components/switch.tsx';
import { SET_TOOL_ENABLED } from '../../documents.ts';
import { pretty } from '../../format.ts';
import type { ConsoleAdminMcpServersQuery } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';

export type McpServer = ConsoleAdminMcpServersQuery['mcpServers'][number];
type McpTool = McpServer['tools'][number];
type ToolGroup = ConsoleAdminMcpServersQuery['toolGroups'][number];

/** What a tool action answered: null when it was done, else the refusal to show. */
type Outcome = string | null;

/** The refusal in an action's answer: none when it is the server, else its typed error's message (a ConflictError, say). */
function refusalOf(answer: { readonly __typename?: string; readonly message?: string }): Outcome {
  return answer.__typename === 'McpServer' ? null : (answer.message ?? 'The server refused this.');
}

/** What a request failed on (a lost connection), as an outcome. */
function settled(request: Promise<Outcome>): Promise<Outcome> {
  return request.catch((failure: Error) => failure.message);
}

type Act = (request: Promise<Outcome>, done: string) => void;

function PendingChange({ server, tool, act }: { server: McpServer; tool: McpTool; act: Act }) {
  const { session } = useSession();
  const change = tool.pendingChange!;
  const id = `mcp-${server.name}-${tool.name}-change`;
  const decide = (accept: boolean) => {
    const variables = { serverId: server.id, toolName: tool.name, digest: change.new.digest };
    const request = accept
      ? session.request(ACCEPT_MCP_TOOL_CHANGE, variables).then((answer) => refusalOf(answer.acceptMcpToolChange))
      : session.request(REJECT_MCP_TOOL_CHANGE, variables).then((answer) => refusalOf(answer.rejectMcpToolChange));
    act(request, accept ? `Accepted the new definition of ${tool.name}: it is offered from now on.` : `Rejected the new definition of ${tool.name}: the pinned one stays.`);
  };
  return (
    <div class="pending-change" id={id}>
      <p>
        <strong>Definition changed at the remote</strong> (held back: runs still get the pinned one until you accept). Lines marked + are new, − are gone.
      </p>
      <DefinitionDiff id={`${id}-description`} caption="Description" before={change.old.description} after={change.new.description} />
      <DefinitionDiff id={`${id}-schema`} caption="Input schema" before={pretty(change.old.inputSchema)} after={pretty(change.new.inputSchema)} />
      {change.new.unavailableReason ? <p class="error">The new definition cannot be offered: {change.new.unavailableReason}</p> : null}
      <div class="actions">
        <RowButton text="Accept change" row={`to ${tool.name}`} onClick={() => decide(true)} />{' '}
        <RowButton text="Reject change" row={`to ${tool.name}`} onClick={() => decide(false)} />
      </div>
    </div>
  );
}

/**
 * The tools of `server`; `groups` says which are switched on (imported tools start off). Every
 * action ends in `onDone(refusal, notice)`: the page reloads, the section shows one of the two.
 */
export function McpTools({ server, groups, onDone }: { server: McpServer; groups: readonly ToolGroup[]; onDone: (refusal: Outcome, notice: string) => void }) {
  const { session } = useSession();
  const group = groups.find((candidate) => candidate.name === server.group);
  const act: Act = (request, done) => void settled(request).then((refusal) => onDone(refusal, done));
  if (server.tools.length === 0) return <p class="empty">The server listed no tool.</p>;
  return (
    <ul class="mcp-tools" id={`mcp-${server.name}-tools`}>
      {server.tools.map((tool) => {
        const state = group?.tools.find((candidate) => candidate.name === tool.name);
        const id = `mcp-${server.name}-${tool.name}`;
        const row = <span class="visually-hidden"> {`${tool.name} of ${server.name}`}</span>;
        const setEnabled = (enabled: boolean) =>
          act(session.request(SET_TOOL_ENABLED, { name: tool.name, enabled }).then(() => null), `${tool.name} is ${enabled ? 'on' : 'off'}.`);
        const setAdminOnly = (adminOnly: boolean) =>
          act(
            session.request(SET_MCP_TOOL_ADMIN_ONLY, { serverId: server.id, toolName: tool.name, adminOnly }).then((answer) => refusalOf(answer.setMcpToolAdminOnly)),
            `${tool.name} is ${adminOnly ? 'for admins only' : 'for everyone its configuration offers it to'}.`,
          );
        return (
          <li key={tool.name} data-mcp-tool={tool.name}>
            <strong>{tool.name}</strong> <span class="description">{tool.description}</span>
            <div class="switches">
              <Switch id={`${id}-enabled`} label={<>Enabled{row}</>} checked={state?.toolEnabled ?? false} onChange={setEnabled} />{' '}
              <Switch id={`${id}-admin-only`} label={<>Admins only{row}</>} checked={tool.adminOnly} onChange={setAdminOnly} />
            </div>
            {group && !group.enabled ? <p class="hint">Its group {server.group} is switched off (Tool groups below).</p> : null}
            {tool.available ? null : <p class="error">Cannot be offered: {tool.unavailableReason}</p>}
            {tool.pendingChange ? <PendingChange server={server} tool={tool} act={act} /> : null}
          </li>
        );
      })}
    </ul>
  );
}

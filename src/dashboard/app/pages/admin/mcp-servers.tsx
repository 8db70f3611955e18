// MCP servers: remote tools imported over Streamable HTTP as the group `mcp:<name>`. Creating,
// editing or refreshing one lists its tools again (an unreachable server changes nothing and says
// so); header values are write-only like a provider's key.
import { ADMIN_MCP_SERVERS, CREATE_MCP_SERVER, DELETE_MCP_SERVER, REFRESH_MCP_SERVER, UPDATE_MCP_SERVER } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { CheckboxField, Form, submitForm, TextField, useForm } from '../../components/forms.tsx';
import { DeleteButton, RowButton } from '../../components/row-actions.tsx';
import { HeaderRows, headersOf, type HeaderRow } from '../../components/header-rows.tsx';
import { formatTime } from '../../format.ts';
import type { UpdateMcpServerInput } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';
import { McpTools, type McpServer } from './mcp-tools.tsx';

interface Values {
  name: string;
  url: string;
  replaceHeaders: boolean;
  headers: readonly HeaderRow[];
}

function McpServerForm({ server, onDone }: { server: McpServer | null; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const form = useForm<Values>(server ? 'edit-mcp-server' : 'new-mcp-server', { name: server?.name ?? '', url: server?.url ?? '', replaceHeaders: !server, headers: [] });
  const save = async () => {
    const { name, url, replaceHeaders, headers } = form.values;
    const input: UpdateMcpServerInput = { name: name.trim(), url: url.trim(), ...(replaceHeaders ? { headers: headersOf(headers) } : {}) };
    const saved = server
      ? await submitForm(form, { session, document: UPDATE_MCP_SERVER, variables: { id: server.id, input }, field: 'updateMcpServer', expect: 'McpServer' })
      : await submitForm(form, { session, document: CREATE_MCP_SERVER, variables: { input: { ...input, name: input.name!, url: input.url! } }, field: 'createMcpServer', expect: 'McpServer' });
    if (saved) onDone(`Saved MCP server ${saved.name}; its tools were listed again.`);
  };
  return (
    <Form form={form} title={server ? `Edit MCP server ${server.name}` : 'New MCP server'} onSubmit={save} onCancel={() => onDone(null)}>
      <TextField form={form} name="name" label="Name" autocomplete="off" hint="1 to 40 letters, digits, _ or -; its tools form the group mcp:<name>." />
      <TextField form={form} name="url" label="URL" type="url" autocomplete="off" hint="The Streamable HTTP endpoint, http(s), no credentials in it: put a token in a header." />
      {server && server.headerNames.length > 0 ? <p class="hint">Stored headers: {server.headerNames.join(', ')} (values set, write-only).</p> : null}
      {server ? <CheckboxField form={form} name="replaceHeaders" label="Replace the request headers" /> : null}
      {form.values.replaceHeaders ? (
        <HeaderRows form={form} legend="Request headers" hint="Sent with every request to the server (an Authorization token, say). Values are write-only; saving replaces the stored headers with these (none: removes them)." />
      ) : null}
    </Form>
  );
}

/** "3 tools, 1 on", "1 change pending". */
function statusOf(server: McpServer, on: number): string {
  const pending = server.tools.filter((tool) => tool.pendingChange).length;
  const unavailable = server.tools.filter((tool) => !tool.available).length;
  return [
    `${server.tools.length} ${server.tools.length === 1 ? 'tool' : 'tools'}, ${on} on`,
    unavailable ? `${unavailable} unavailable` : null,
    pending ? `${pending} ${pending === 1 ? 'change' : 'changes'} pending` : null,
  ]
    .filter(Boolean)
    .join('; ');
}

/** The servers with New / Edit / Refresh / Delete, then each server's tools. */
export function McpServersSection(props: AdminProps) {
  const { data, error, setError } = useAdminData(ADMIN_MCP_SERVERS, props.version);
  const { session, notice, setNotice, editing, done, remove, openForm } = useSectionState('mcp-server', props, setError);
  const servers = data?.mcpServers ?? null;
  const groups = data?.toolGroups ?? [];
  const toolsOn = (server: McpServer) => groups.find((group) => group.name === server.group)?.tools.filter((tool) => tool.toolEnabled).length ?? 0;
  /** A row or tool action finished: the page reloads either way (a refused accept may mean the pending change moved on). */
  const finished = (refusal: string | null, message: string) => {
    setError(refusal);
    setNotice(refusal ? null : message);
    props.onChanged();
  };
  const refresh = async (server: McpServer) => {
    setError(null);
    try {
      const answer = (await session.request(REFRESH_MCP_SERVER, { id: server.id })).refreshMcpServer;
      if (answer.__typename === 'McpServer') finished(null, `Refreshed MCP server ${server.name}: ${answer.tools.length} tools listed.`);
      else finished(`Refreshing ${server.name} failed: ${'message' in answer ? answer.message : 'the server refused it.'}`, '');
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const form = editing ? <McpServerForm key={editing.id ?? 'new'} server={editing.id ? (servers?.find((s) => s.id === editing.id) ?? null) : null} onDone={done} /> : null;
  return (
    <AdminSection
      id="mcp-servers"
      title="MCP servers"
      intro="Tools of remote MCP servers, imported switched off. A remote's change to a tool's definition waits for your decision below."
      newLabel="New MCP server"
      onNew={() => openForm(null)}
      form={form}
      notice={notice}
      error={error}
    >
      {listOr(servers, 'No MCP server.', (rows) => (
        <>
          <table id="mcp-servers-table">
            <caption class="visually-hidden">MCP servers</caption>
            <thead>
              <tr>
                <th scope="col">Name</th><th scope="col">URL</th><th scope="col">Headers</th><th scope="col">Status</th><th scope="col">Refreshed</th><th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id} data-mcp-server={s.name}>
                  <td>{s.name}</td>
                  <td>{s.url}</td>
                  <td>{s.headerNames.length ? `${s.headerNames.join(', ')} (set)` : '—'}</td>
                  <td class="mcp-status">{statusOf(s, toolsOn(s))}</td>
                  <td>{formatTime(s.refreshedAt)}</td>
                  <td class="actions">
                    <RowButton text="Edit" row={`MCP server ${s.name}`} onClick={() => openForm(s.id)} />{' '}
                    <RowButton text="Refresh" row={`MCP server ${s.name}`} onClick={() => void refresh(s)} />{' '}
                    <DeleteButton label={`MCP server ${s.name}`} onDelete={() => remove(DELETE_MCP_SERVER, { id: s.id }, 'deleteMcpServer', `Deleted MCP server ${s.name}.`)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.map((s) => (
            <div class="mcp-server-tools" key={s.id}>
              <h3>Tools of {s.name}</h3>
              <McpTools server={s} groups={groups} onDone={finished} />
            </div>
          ))}
        </>
      ))}
    </AdminSection>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { CONFIGURATIONS, ROTATE_TOKEN, SET_TOOL_ENABLED, SET_TOOL_GROUP_ENABLED, SET_USER_ACTIVE, TOOL_GROUPS, USAGE_BY_DAY, USERS } from './documents.js';
import { formatCost, formatTime, html } from './html.js';

function Switch({ id, label, checked, disabled, onChange, describedBy }) {
  return html`<span class="switch">
    <input type="checkbox" role="switch" id=${id} checked=${checked} disabled=${disabled} aria-describedby=${describedBy} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <label for=${id}>${label}</label>
  </span>`;
}

function ToolSwitches({ session, setError }) {
  const [groups, setGroups] = useState(null);
  const load = () => session.request(TOOL_GROUPS).then((d) => setGroups(d.toolGroups), (e) => setError(e.message));
  useEffect(() => void load(), [session]);
  const run = (document, variables) => session.request(document, variables).then(load, (e) => setError(e.message));
  return html`<section aria-labelledby="tools-heading">
    <h2 id="tools-heading">Tool groups and tools</h2>
    ${groups === null
      ? html`<p role="status">Loading…</p>`
      : groups.map(
          (group) => html`<div class="group" key=${group.name}>
            <h3><${Switch} id=${`switch-group-${group.name}`} label=${`Group ${group.name}`} checked=${group.enabled}
              onChange=${(enabled) => run(SET_TOOL_GROUP_ENABLED, { name: group.name, enabled })} /></h3>
            <ul>
              ${group.tools.map((tool) => {
                const id = `switch-tool-${tool.name}`;
                const why = !tool.groupEnabled ? `Off because its group ${group.name} is switched off.` : !tool.toolEnabled ? 'Switched off.' : tool.requiresAdmin ? 'On (admins only).' : 'On.';
                return html`<li key=${tool.name}>
                  <${Switch} id=${id} label=${tool.name} checked=${tool.toolEnabled} describedBy=${`${id}-why`}
                    onChange=${(enabled) => run(SET_TOOL_ENABLED, { name: tool.name, enabled })} />
                  <span class=${tool.enabled ? 'why' : 'why off'} id=${`${id}-why`}>${why}</span>
                  <span class="description">${tool.description}</span>
                </li>`;
              })}
            </ul>
          </div>`,
        )}
  </section>`;
}

function Configurations({ session, setError }) {
  const [configurations, setConfigurations] = useState(null);
  useEffect(() => void session.request(CONFIGURATIONS).then((d) => setConfigurations(d.configurations), (e) => setError(e.message)), [session]);
  return html`<section aria-labelledby="configurations-heading">
    <h2 id="configurations-heading">Configurations</h2>
    ${configurations === null
      ? html`<p role="status">Loading…</p>`
      : configurations.length === 0
        ? html`<p class="empty">No configuration yet: create one with createConfiguration (GraphiQL).</p>`
        : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Model</th><th scope="col">Privacy</th><th scope="col">Tool groups</th><th scope="col">Second approver</th></tr></thead>
          <tbody>${configurations.map((c) => html`<tr key=${c.id}><td>${c.name}</td><td>${c.model.name}</td><td>${c.privacyLevel}</td><td>${c.allowedToolGroups.length ? c.allowedToolGroups.join(', ') : 'any'}</td><td>${c.requireSecondApprover ? 'yes' : 'no'}</td></tr>`)}</tbody></table>`}
  </section>`;
}

function Users({ session, setError }) {
  const [users, setUsers] = useState(null);
  const [token, setToken] = useState(null);
  const load = () => session.request(USERS).then((d) => setUsers(d.users), (e) => setError(e.message));
  useEffect(() => void load(), [session]);
  const rotate = async (user) => {
    const data = await session.request(ROTATE_TOKEN, { userId: user.id }).catch((e) => setError(e.message));
    if (!data) return;
    if (data.rotateToken.__typename === 'CreateUserPayload') setToken({ name: user.name, token: data.rotateToken.token });
    else setError(data.rotateToken.message);
    void load();
  };
  const setActive = async (user, active) => {
    const data = await session.request(SET_USER_ACTIVE, { userId: user.id, active }).catch((e) => setError(e.message));
    if (data && data.setUserActive.__typename !== 'User') setError(data.setUserActive.message);
    void load();
  };
  return html`<section aria-labelledby="users-heading">
    <h2 id="users-heading">Users</h2>
    ${token
      ? html`<div class="new-token" role="status"><p>New token for ${token.name}, shown this once: copy it now.</p>
          <label for="new-token">Token</label> <input id="new-token" readonly value=${token.token} />
          <button type="button" onClick=${() => setToken(null)}>I copied it</button></div>`
      : null}
    ${users === null
      ? html`<p role="status">Loading…</p>`
      : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Active</th><th scope="col">Token rotated</th><th scope="col">Actions</th></tr></thead>
          <tbody>${users.map(
            (u) => html`<tr key=${u.id}><td>${u.name}</td><td>${u.isAdmin ? 'admin' : 'user'}</td><td>${u.active ? 'yes' : 'no'}</td><td>${formatTime(u.tokenRotatedAt)}</td>
              <td><button type="button" aria-label=${`Rotate token of ${u.name}`} onClick=${() => rotate(u)}>Rotate token</button>
                <button type="button" aria-label=${`${u.active ? 'Deactivate' : 'Reactivate'} ${u.name}`} onClick=${() => setActive(u, !u.active)}>${u.active ? 'Deactivate' : 'Reactivate'}</button></td></tr>`,
          )}</tbody></table>`}
  </section>`;
}

function UsageChart({ rows }) {
  const target = useRef(null);
  useEffect(() => {
    if (!target.current || rows.length === 0) return;
    const xs = rows.map((r) => Date.parse(`${r.day}T00:00:00Z`) / 1000);
    const chart = new uPlot(
      {
        title: 'Cost per day (USD)',
        width: Math.min(800, target.current.clientWidth || 800),
        height: 240,
        series: [{}, { label: 'Cost', stroke: '#1a5fb4', width: 2, value: (_u, v) => (v === null ? '—' : `$${v.toFixed(6)}`) }],
        axes: [{}, { values: (_u, ticks) => ticks.map((v) => `$${v}`) }],
      },
      [xs, rows.map((r) => r.cost)],
      target.current,
    );
    return () => chart.destroy();
  }, [rows]);
  return html`<div ref=${target} class="chart" aria-hidden="true"></div>`;
}

function Usage({ session, setError }) {
  const [rows, setRows] = useState(null);
  useEffect(() => {
    const to = new Date(Date.now() + 86_400_000);
    const from = new Date(to.getTime() - 31 * 86_400_000);
    session.request(USAGE_BY_DAY, { from: from.toISOString(), to: to.toISOString() }).then((d) => setRows(d.usageSummary), (e) => setError(e.message));
  }, [session]);
  return html`<section aria-labelledby="usage-heading">
    <h2 id="usage-heading">Usage and cost by day (last 30 days)</h2>
    ${rows === null
      ? html`<p role="status">Loading…</p>`
      : rows.length === 0
        ? html`<p class="empty">No usage recorded in the last 30 days.</p>`
        : html`<${UsageChart} rows=${rows} />
          <table id="usage-table"><caption>Usage by day (the chart's data)</caption>
            <thead><tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th><th scope="col">Cost</th></tr></thead>
            <tbody>${rows.map((r) => html`<tr key=${r.day}><td>${r.day}</td><td>${r.requests}</td><td>${r.promptTokens}</td><td>${r.completionTokens}</td><td>${formatCost(r.cost)}</td></tr>`)}</tbody>
          </table>`}
  </section>`;
}

/** Admin: tool switches with their cascade, configurations, users, usage by day. */
export function AdminPage({ session }) {
  const [error, setError] = useState(null);
  const props = { session, setError: (message) => setError(message) };
  return html`
    <h1>Admin</h1>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    <${ToolSwitches} ...${props} />
    <${Configurations} ...${props} />
    <${Users} ...${props} />
    <${Usage} ...${props} />
  `;
}

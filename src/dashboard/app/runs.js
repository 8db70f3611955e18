import { useEffect, useMemo, useState } from 'preact/hooks';
import { CONFIGURATIONS, RUNS, RUN_UPDATES, USERS } from './documents.ts';
import { formatCost, formatTime, html, runHref, STATUSES } from './html.js';
import { DemoSetup } from './demo.js';

export const PAGE_SIZE = 50;

/** The live runs list: a `runs` page for the totals and the cursor, kept current by `runUpdates`. */
export function RunsPage({ session, viewer }) {
  const [status, setStatus] = useState('');
  const [configurationId, setConfigurationId] = useState('');
  const [userId, setUserId] = useState('');
  const [cursors, setCursors] = useState([null]);
  const [page, setPage] = useState(null);
  const [live, setLive] = useState(() => new Map());
  const [error, setError] = useState(null);
  const [configurations, setConfigurations] = useState(null);
  const [users, setUsers] = useState([]);

  const filter = useMemo(() => {
    const value = {};
    if (status) value.status = [status];
    if (configurationId) value.configurationId = configurationId;
    if (userId) value.userId = userId;
    return value;
  }, [status, configurationId, userId]);
  const after = cursors.at(-1);

  useEffect(() => {
    session.request(CONFIGURATIONS).then((data) => setConfigurations(data.configurations), (e) => setError(e.message));
    if (viewer.isAdmin) session.request(USERS).then((data) => setUsers(data.users), (e) => setError(e.message));
  }, [session]);

  useEffect(() => {
    let current = true;
    setPage(null);
    session.request(RUNS, { filter, first: PAGE_SIZE, after }).then(
      (data) => current && setPage(data.runs),
      (e) => current && setError(e.message),
    );
    return () => {
      current = false;
    };
  }, [session, filter, after]);

  useEffect(() => {
    setLive(new Map());
    return session.subscribe(
      RUN_UPDATES,
      { filter },
      (data) => {
        const { run, snapshot } = data.runUpdates;
        setLive((previous) => {
          const next = new Map(previous);
          next.set(run.id, { run, snapshot });
          return next;
        });
      },
      (e) => setError(e.message),
    );
  }, [session, filter]);

  const matches = (run) => filter.status === undefined || filter.status.includes(run.status);
  let rows = [];
  let added = 0;
  if (page) {
    const known = new Set(page.edges.map((edge) => edge.node.id));
    rows = page.edges.map((edge) => live.get(edge.node.id)?.run ?? edge.node).filter(matches);
    if (after === null) {
      const fresh = [...live.values()].filter(({ run, snapshot }) => !snapshot && !known.has(run.id) && matches(run)).map(({ run }) => run);
      added = fresh.length;
      rows = [...fresh, ...rows].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).slice(0, PAGE_SIZE);
    }
  }
  const total = page ? page.totalCount + added - (page.edges.length - page.edges.filter((e) => matches(live.get(e.node.id)?.run ?? e.node)).length) : null;

  const onFilter = (setter) => (event) => {
    setter(event.currentTarget.value);
    setCursors([null]);
  };

  return html`
    <h1>Runs</h1>
    <form class="filters" aria-label="Filter runs" onSubmit=${(e) => e.preventDefault()}>
      <label>Status
        <select id="filter-status" value=${status} onChange=${onFilter(setStatus)}>
          <option value="">Any status</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
      <label>Configuration
        <select id="filter-configuration" value=${configurationId} onChange=${onFilter(setConfigurationId)}>
          <option value="">Any configuration</option>
          ${(configurations ?? []).map((c) => html`<option value=${c.id}>${c.name}</option>`)}
        </select>
      </label>
      ${viewer.isAdmin
        ? html`<label>User
            <select id="filter-user" value=${userId} onChange=${onFilter(setUserId)}>
              <option value="">Any user</option>
              ${users.map((u) => html`<option value=${u.id}>${u.name}</option>`)}
            </select>
          </label>`
        : null}
    </form>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    ${viewer.isAdmin && configurations?.length === 0 ? html`<${DemoSetup} session=${session} onCreated=${() => (location.hash = '#/playground')} />` : null}
    ${page === null
      ? html`<p role="status">Loading runs…</p>`
      : rows.length === 0
        ? html`<p class="empty" id="runs-empty">No runs ${Object.keys(filter).length ? 'match these filters' : 'yet'}. <a href="#/playground">Start one</a> in the playground${Object.keys(filter).length ? ', or clear the filters' : ''}; it appears here live.</p>`
        : html`
            <p id="runs-total" role="status">${total} run${total === 1 ? '' : 's'} in all; showing ${rows.length}, updated live.</p>
            <table class="runs" id="runs-table">
              <caption class="visually-hidden">Runs, newest first</caption>
              <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Configuration</th><th scope="col">User</th><th scope="col">Prompt</th><th scope="col">Started</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
              <tbody>
                ${rows.map(
                  (run) => html`<tr key=${run.id} data-run-id=${run.id}>
                    <td><a href=${runHref(run.id)}>Inspect</a></td>
                    <td class="status" data-status=${run.status}><span class=${`badge ${run.status.toLowerCase()}`}>${run.status}</span>${run.kind === 'MCP' ? html` <span class="badge kind" title="An MCP session: one TOOL step per call of an MCP client">MCP</span>` : null}</td>
                    <td>${run.configuration?.name ?? '—'}</td>
                    <td>${run.user?.name ?? '—'}</td>
                    <td class="prompt">${run.prompt ?? (run.kind === 'MCP' ? '(MCP session)' : '(hidden)')}</td>
                    <td>${formatTime(run.createdAt)}</td>
                    <td>${run.usage.totalTokens}</td>
                    <td>${formatCost(run.usage.estimatedCost)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          `}
    <nav class="pager" aria-label="Pages of runs">
      <button type="button" disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
      <button type="button" disabled=${!page?.pageInfo.hasNextPage} onClick=${() => setCursors([...cursors, page.pageInfo.endCursor])}>Next page</button>
    </nav>
  `;
}

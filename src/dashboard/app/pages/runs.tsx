import { useState } from 'preact/hooks';
import { DemoSetup } from '../components/demo-setup.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { CONFIGURATIONS, RUNS, RUN_UPDATES, USERS } from '../documents.ts';
import { formatCost, formatTime, runHref, shortRunId, STATUSES } from '../format.ts';
import type { ConsoleRunsQuery, RunFilter, RunStatus } from '../gql/graphql.ts';
import { useQuery } from '../hooks/use-query.ts';
import { useSession } from '../hooks/use-session.ts';
import { useSubscription } from '../hooks/use-subscription.ts';

export const PAGE_SIZE = 50;

type Run = ConsoleRunsQuery['runs']['edges'][number]['node'];
interface LiveRun {
  readonly run: Run;
  /** Sent as the subscription opened (already in the page's answer), not a change since. */
  readonly snapshot: boolean;
}

const newestFirst = (a: Run, b: Run) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0);

/** One row, named by the run's short id: the link reads "Run 1a2b3c4d" and is named "Inspect run 1a2b3c4d". */
function RunRow({ run }: { run: Run }) {
  const short = shortRunId(run.id);
  return (
    <tr data-run-id={run.id}>
      <td class="run-id">
        <a href={runHref(run.id)} aria-label={`Inspect run ${short}`}>
          Run <code>{short}</code>
        </a>
      </td>
      <td class="status" data-status={run.status}>
        <StatusBadge status={run.status} />
        {run.kind === 'MCP' ? (
          <>
            {' '}
            <span class="badge kind" title="An MCP session: one TOOL step per call of an MCP client">
              MCP
            </span>
          </>
        ) : null}
      </td>
      <td>{run.configuration?.name ?? '—'}</td>
      <td>{run.user?.name ?? '—'}</td>
      <td class="prompt">{run.prompt ?? (run.kind === 'MCP' ? '(MCP session)' : '(hidden)')}</td>
      <td>{formatTime(run.createdAt)}</td>
      <td>{run.usage.totalTokens}</td>
      <td>{formatCost(run.usage.estimatedCost)}</td>
    </tr>
  );
}

/**
 * The runs of one filter: a `runs` page for the totals and the cursor, kept current by `runUpdates`.
 * Mounted once per filter (keyed), so the pages, the live map and the subscription start afresh.
 */
function RunList({ filter }: { filter: RunFilter }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors.at(-1) ?? null;
  const runs = useQuery(RUNS, { filter, first: PAGE_SIZE, after });
  const [live, setLive] = useState<ReadonlyMap<string, LiveRun>>(() => new Map());
  const updates = useSubscription(RUN_UPDATES, { filter }, (data) => {
    const { run, snapshot } = data.runUpdates;
    setLive((previous) => new Map(previous).set(run.id, { run, snapshot }));
  });

  const page = runs.loading ? null : (runs.data?.runs ?? null);
  const statuses = filter.status as readonly RunStatus[] | undefined;
  const matches = (run: Run) => statuses === undefined || statuses.includes(run.status);
  let rows: Run[] = [];
  let added = 0;
  if (page) {
    const known = new Set(page.edges.map((edge) => edge.node.id));
    rows = page.edges.map((edge) => live.get(edge.node.id)?.run ?? edge.node).filter(matches);
    // Runs started since the first page was read join it live (later pages stay as read).
    if (after === null) {
      const fresh = [...live.values()].filter(({ run, snapshot }) => !snapshot && !known.has(run.id) && matches(run)).map(({ run }) => run);
      added = fresh.length;
      rows = [...fresh, ...rows].sort(newestFirst).slice(0, PAGE_SIZE);
    }
  }
  const left = page ? page.edges.length - page.edges.filter((edge) => matches(live.get(edge.node.id)?.run ?? edge.node)).length : 0;
  const total = page ? page.totalCount + added - left : null;
  const filtered = Object.keys(filter).length > 0;
  const error = runs.error ?? updates.error;

  return (
    <>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      {page === null ? (
        <p role="status">Loading runs…</p>
      ) : rows.length === 0 ? (
        <p class="empty" id="runs-empty">
          No runs {filtered ? 'match these filters' : 'yet'}. <a href="#/playground">Start one</a> in the playground{filtered ? ', or clear the filters' : ''}; it
          appears here live.
        </p>
      ) : (
        <>
          <p id="runs-total" role="status">
            {total} run{total === 1 ? '' : 's'} in all; showing {rows.length}, updated live.
          </p>
          <table class="runs" id="runs-table">
            <caption class="visually-hidden">Runs, newest first</caption>
            <thead>
              <tr>
                {['Run', 'Status', 'Configuration', 'User', 'Prompt', 'Started', 'Tokens', 'Cost'].map((heading) => (
                  <th key={heading} scope="col">
                    {heading}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((run) => (
                <RunRow key={run.id} run={run} />
              ))}
            </tbody>
          </table>
        </>
      )}
      <nav class="pager" aria-label="Pages of runs">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!page?.pageInfo.hasNextPage} onClick={() => page && setCursors([...cursors, page.pageInfo.endCursor])}>
          Next page
        </button>
      </nav>
    </>
  );
}

/** The live runs list, filtered by status, configuration and (for an admin) user. */
export function RunsPage() {
  const { viewer } = useSession();
  const [status, setStatus] = useState('');
  const [configurationId, setConfigurationId] = useState('');
  const [userId, setUserId] = useState('');
  const configurations = useQuery(CONFIGURATIONS);
  const users = useQuery(USERS, {}, { skip: !viewer.isAdmin });

  const filter: RunFilter = {
    ...(status ? { status: [status as RunStatus] } : {}),
    ...(configurationId ? { configurationId } : {}),
    ...(userId ? { userId } : {}),
  };
  const onFilter = (setter: (value: string) => void) => (event: Event) => setter((event.currentTarget as HTMLSelectElement).value);
  const error = configurations.error ?? users.error;
  const list = configurations.data?.configurations ?? null;

  return (
    <>
      <h1>Runs</h1>
      <form class="filters" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select id="filter-status" value={status} onChange={onFilter(setStatus)}>
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Configuration
          <select id="filter-configuration" value={configurationId} onChange={onFilter(setConfigurationId)}>
            <option value="">Any configuration</option>
            {(list ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        {viewer.isAdmin ? (
          <label>
            User
            <select id="filter-user" value={userId} onChange={onFilter(setUserId)}>
              <option value="">Any user</option>
              {(users.data?.users ?? []).map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </form>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      {viewer.isAdmin && list?.length === 0 ? <DemoSetup onCreated={() => (location.hash = '#/playground')} /> : null}
      <RunList key={JSON.stringify(filter)} filter={filter} />
    </>
  );
}

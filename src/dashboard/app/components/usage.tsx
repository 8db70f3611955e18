import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { USAGE_BY_DAY } from '../documents.ts';
import { formatCost } from '../format.ts';
import type { ConsoleUsageByDayQuery } from '../gql/graphql.ts';
import { useQuery } from '../hooks/use-query.ts';

type UsageRow = ConsoleUsageByDayQuery['usageSummary'][number];

function UsageChart({ rows }: { rows: readonly UsageRow[] }) {
  const target = useRef<HTMLDivElement>(null);
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
  return <div ref={target} class="chart" aria-hidden="true"></div>;
}

export function Usage() {
  const to = new Date(Date.now() + 86_400_000);
  const from = new Date(to.getTime() - 31 * 86_400_000);
  const { data, error } = useQuery(USAGE_BY_DAY, { from: from.toISOString(), to: to.toISOString() });
  const rows = data?.usageSummary ?? null;
  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage and cost by day (last 30 days)</h2>
      {error ? <p role="alert" class="error">{error}</p> : null}
      {rows === null ? (
        <p role="status">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="empty">No usage recorded in the last 30 days.</p>
      ) : (
        <>
          <UsageChart rows={rows} />
          <table id="usage-table">
            <caption>Usage by day (the chart's data)</caption>
            <thead>
              <tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th><th scope="col">Cost</th></tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.day}><td>{r.day}</td><td>{r.requests}</td><td>{r.promptTokens}</td><td>{r.completionTokens}</td><td>{formatCost(r.cost)}</td></tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

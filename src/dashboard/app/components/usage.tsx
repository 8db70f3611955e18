// Usage and cost by UTC day on the Admin page: a range (the last day, 7 or 30 days, or any dates),
// bars per day for the range's every day, cost or tokens, and the table of the same days (the
// chart's accessible alternative).
import { useState } from 'preact/hooks';
import { USAGE_BY_DAY } from '../documents.ts';
import { formatCost } from '../format.ts';
import { useQuery } from '../hooks/use-query.ts';
import { describedBy, Notes } from './forms.tsx';
import { UsageChart, type UsageMeasure } from './usage-chart.tsx';
import { daysOf, lastDays, rangeProblems, rowsByDay, summaryBounds, type DayRange } from './usage-range.ts';
import './usage.css';

const PRESETS = [
  [1, 'Last day'],
  [7, 'Last 7 days'],
  [30, 'Last 30 days'],
] as const;

const MEASURES: readonly (readonly [UsageMeasure, string])[] = [
  ['cost', 'Cost'],
  ['tokens', 'Tokens'],
];

/** A date input for one end of the range, its problem shown beside it. */
function DayField({ id, label, value, error, onChange }: { id: string; label: string; value: string; error?: string; onChange: (day: string) => void }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        type="date"
        id={id}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(id, null, error)}
        onInput={(event) => onChange(event.currentTarget.value)}
      />
      <Notes id={id} error={error} />
    </div>
  );
}

/**
 * One range's usage: its own query (keyed by the range, so it never shows another range's
 * answer while a new one loads), every day of the range a bar and a row.
 */
function RangeUsage({ range, measure }: { range: DayRange; measure: UsageMeasure }) {
  const { data, error } = useQuery(USAGE_BY_DAY, summaryBounds(range));
  if (error) {
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  }
  if (data === null) return <p role="status">Loading…</p>;
  const rows = rowsByDay(daysOf(range), data.usageSummary);
  return (
    <>
      {data.usageSummary.length === 0 ? <p class="empty">No usage recorded from {range.from} to {range.to} (UTC).</p> : null}
      <UsageChart rows={rows} measure={measure} />
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Usage by day">
        <table id="usage-table">
          <caption>
            Usage by UTC day, {range.from} to {range.to} (the chart's data)
          </caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Requests</th>
              <th scope="col">Prompt tokens</th>
              <th scope="col">Completion tokens</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.day}>
                <th scope="row">{row.day}</th>
                <td>{row.requests}</td>
                <td>{row.promptTokens}</td>
                <td>{row.completionTokens}</td>
                <td>{row.promptTokens + row.completionTokens}</td>
                <td>{formatCost(row.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The Admin page's usage section. Starts on the last 30 days. */
export function Usage() {
  const [range, setRange] = useState<DayRange>(() => lastDays(30));
  const [measure, setMeasure] = useState<UsageMeasure>('cost');
  const problems = rangeProblems(range);
  const preset = (count: number) => {
    const last = lastDays(count);
    return last.from === range.from && last.to === range.to;
  };
  return (
    <section id="usage-section">
      <h2>Usage and cost by day</h2>
      <p class="hint">Days are UTC calendar days, as the API groups usage; both ends of the range are included.</p>
      <div class="usage-controls">
        <div class="usage-presets">
          {PRESETS.map(([count, label]) => (
            <button key={count} type="button" aria-pressed={preset(count) ? 'true' : 'false'} onClick={() => setRange(lastDays(count))}>
              {label}
            </button>
          ))}
        </div>
        <DayField id="usage-from" label="From (UTC)" value={range.from} error={problems?.from} onChange={(from) => setRange((current) => ({ ...current, from }))} />
        <DayField id="usage-to" label="To (UTC)" value={range.to} error={problems?.to} onChange={(to) => setRange((current) => ({ ...current, to }))} />
        <fieldset class="choices" role="radiogroup">
          <legend>Show</legend>
          {MEASURES.map(([value, label]) => (
            <label key={value}>
              <input type="radio" name="usage-measure" value={value} checked={measure === value} onChange={() => setMeasure(value)} /> {label}
            </label>
          ))}
        </fieldset>
      </div>
      {problems ? null : <RangeUsage key={`${range.from}/${range.to}`} range={range} measure={measure} />}
    </section>
  );
}

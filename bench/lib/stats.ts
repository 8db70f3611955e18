/** Order statistics over samples; every figure the harness prints is one of these. */

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** The three figures a latency is reported by. */
export interface Quantiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** p50, p99 and the maximum of `values` (each NaN when there are none). */
export function quantiles(values: readonly number[]): Quantiles {
  return { p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: values.length === 0 ? Number.NaN : values.reduce((highest, value) => Math.max(highest, value), Number.NEGATIVE_INFINITY) };
}

/** `value` with a sensible number of digits for a table cell. */
export function fmt(value: number | null | undefined, digits?: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (digits !== undefined) return value.toFixed(digits);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

export function ratio(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined || baseline === 0) return null;
  return value / baseline;
}

export function fmtRatio(value: number | null): string {
  return value === null || !Number.isFinite(value) ? '—' : `${value.toFixed(2)}×`;
}

/** Plain-text table: the header, a rule, the rows; columns padded to the widest cell. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, index) => Math.max(cell.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join('  ');
  return [line(header), widths.map((width) => '─'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

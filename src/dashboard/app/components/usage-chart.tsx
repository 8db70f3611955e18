// Usage per UTC day as bars (uPlot's bars path builder), one bar per day of the chosen range: a
// day without usage is a zero bar, so the x-axis is always the range asked for. The canvas is
// hidden from assistive technology (the table beside it holds the same data); the figure's data
// attributes carry what the bars draw, for tests that read the chart without reading pixels.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { UsageRow } from './usage-range.ts';

export type UsageMeasure = 'cost' | 'tokens';

/** Room for one day label on the x-axis (px); the bars stay one per day, labels skip days. */
const LABEL_WIDTH = 80;

export function measureOf(row: UsageRow, measure: UsageMeasure): number {
  return measure === 'cost' ? row.cost : row.promptTokens + row.completionTokens;
}

/** A tick or a hovered value as text ("$0.0125", "1,234 tokens"). */
function formatValue(value: number, measure: UsageMeasure): string {
  const short = Number(value.toPrecision(6));
  return measure === 'cost' ? `$${short}` : `${short.toLocaleString('en-US')} tokens`;
}

/** A design token of the stylesheet (light or dark scheme), for the canvas, which cannot read var(). */
function token(element: Element, name: string, fallback: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || fallback;
}

/** The chart's width: its container's, at most 800 px. */
const widthIn = (element: HTMLElement) => Math.min(800, element.clientWidth || 800);

function chartOptions(target: HTMLElement, days: readonly string[], measure: UsageMeasure): uPlot.Options {
  const fg = token(target, '--fg', '#1b1f24');
  const grid = token(target, '--border', '#d5dae0');
  const bar = token(target, '--series-1', '#1a5fb4');
  const step = (u: uPlot) => Math.ceil(days.length / Math.max(1, Math.floor(u.width / LABEL_WIDTH)));
  // x is the day's index: the axis spans exactly the range, half a day of margin each side.
  const dayLabel = (index: number) => (days.length === 1 ? days[index] : days[index]?.slice(5)) ?? '';
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return {
    title: `${measure === 'cost' ? 'Cost (USD)' : 'Tokens (prompt + completion)'} per UTC day, ${days[0]} to ${days[days.length - 1]}`,
    width: widthIn(target),
    height: 260,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: () => [-0.5, days.length - 0.5] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    series: [
      { label: 'Day (UTC)', value: (_u, index) => (index === null ? '—' : (days[index] ?? '—')) },
      {
        label: measure === 'cost' ? 'Cost' : 'Tokens',
        stroke: bar,
        fill: bar,
        width: 0,
        points: { show: false },
        paths: uPlot.paths.bars!({ size: [0.7, 48], align: 0 }),
        value: (_u, value) => (value === null ? '—' : formatValue(value, measure)),
      },
    ],
    axes: [
      {
        ...axis,
        label: 'Day (UTC)',
        grid: { show: false },
        splits: (u) => days.map((_day, index) => index).filter((index) => index % step(u) === 0),
        values: (_u, splits) => splits.map((index) => dayLabel(index)),
      },
      { ...axis, size: 80, values: (_u, ticks) => ticks.map((value) => formatValue(value, measure).replace(' tokens', '')) },
    ],
  };
}

/**
 * The bars of `rows` (one per day, in order). Drawn again when the rows, the measure or the colour
 * scheme change; resized with its container (390 px wide screens included).
 */
export function UsageChart({ rows, measure }: { rows: readonly UsageRow[]; measure: UsageMeasure }) {
  const target = useRef<HTMLDivElement>(null);
  const days = rows.map((row) => row.day ?? '');
  const values = rows.map((row) => measureOf(row, measure));
  useEffect(() => {
    const element = target.current;
    if (!element || rows.length === 0) return;
    let chart: uPlot | null = null;
    // Drawn again (not recoloured) when the scheme changes: the options read the tokens anew.
    const draw = () => {
      chart?.destroy();
      chart = new uPlot(chartOptions(element, days, measure), [days.map((_day, index) => index), values], element);
    };
    draw();
    const dark = matchMedia('(prefers-color-scheme: dark)');
    dark.addEventListener('change', draw);
    // Only a new width resizes: drawing changes the container's height, which must not loop.
    const resize = new ResizeObserver(() => {
      if (chart && chart.width !== widthIn(element)) chart.setSize({ width: widthIn(element), height: 260 });
    });
    resize.observe(element);
    return () => {
      dark.removeEventListener('change', draw);
      resize.disconnect();
      chart?.destroy();
    };
  }, [rows, measure]);
  return (
    <div
      ref={target}
      class="chart usage-chart"
      aria-hidden="true"
      data-measure={measure}
      data-from={days[0]}
      data-to={days[days.length - 1]}
      data-bars={rows.length}
      data-days={days.join(' ')}
      data-values={values.join(' ')}
    ></div>
  );
}

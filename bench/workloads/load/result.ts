/** The load scenario's result, its table and its targets: no error, no lost step, bounded memory. */
import type { SettledMemory } from '../../lib/settled-memory.ts';
import { fmt } from '../../lib/stats.ts';
import type { TargetCheck } from '../../lib/targets.ts';
import type { LoadOptions } from './options.ts';
import { MB, type RssSample } from './phase.ts';

/** How much the memory may grow, last window over first and settled heap after over before. */
const BOUND = 1.2;

export interface LoadResult {
  readonly options: LoadOptions;
  readonly runs: {
    readonly completed: number;
    readonly total: number;
    /** Runs started in the measured phase (their times make the percentiles). */
    readonly measured: number;
    /** Runs started during the warm-up (verified like the others, not in runs/s or run times). */
    readonly warmUp: number;
    readonly perSecond: number;
    readonly p50Ms: number;
    readonly p95Ms: number;
    readonly p99Ms: number;
  };
  readonly steps: { readonly streamed: number; readonly stored: number; readonly perSecond: number };
  readonly errors: {
    readonly total: number;
    readonly runs: number;
    readonly unexpectedSteps: number;
    readonly idle: number;
    readonly serverErrorLines: number;
    readonly serverWarnLines: number;
    readonly examples: string[];
  };
  readonly lostSteps: number;
  readonly duplicateSteps: number;
  readonly outOfOrderSteps: number;
  readonly idle: {
    readonly subscriptions: number;
    readonly waitingRuns: number;
    readonly openAtEnd: number;
    readonly eventsDuringLoad: number;
    readonly endedCleanly: number;
  };
  readonly memory: {
    readonly windowSeconds: number;
    readonly rssStartMb: number;
    readonly rssPeakMb: number;
    readonly rssFirstWindowMb: number;
    readonly rssLastWindowMb: number;
    readonly rssGrowth: number;
    readonly vmHwmMb: number | null;
    readonly settledBefore: SettledMemory;
    readonly settledAfter: SettledMemory;
    readonly heapGrowth: number;
    readonly samples: RssSample[];
  };
  readonly serverCpuPercent: number | null;
  readonly table: string;
  readonly targets: TargetCheck[];
}

export type LoadFigures = Omit<LoadResult, 'table' | 'targets'>;

export function renderLoad(result: LoadFigures): string {
  const { options, runs, steps, errors, idle, memory } = result;
  const w = fmt(memory.windowSeconds, 0);
  const rows: [string, string][] = [
    [
      'load',
      `${options.concurrency} runs in flight + ${idle.subscriptions} idle runEvents subscriptions (${idle.waitingRuns} waiting runs) for ${options.durationSeconds} s after a ${options.warmUpSeconds} s warm-up; provider latency ${options.latencyMs} ms, K = ${options.k}`,
    ],
    ['runs completed / started (all verified)', `${runs.completed} / ${runs.total} (${runs.measured} started in the measured ${options.durationSeconds} s, ${runs.warmUp} before it)`],
    ['runs/s (measured phase)', fmt(runs.perSecond)],
    ['run time p50 / p95 / p99 (measured phase)', `${fmt(runs.p50Ms)} / ${fmt(runs.p95Ms)} / ${fmt(runs.p99Ms)} ms`],
    ['steps streamed / stored (all runs)', `${steps.streamed} / ${steps.stored} (${fmt(steps.perSecond)} steps/s in the measured phase)`],
    ['errors', `${errors.total} (runs ${errors.runs}, unexpected step lists ${errors.unexpectedSteps}, idle subscriptions ${errors.idle}, server error log lines ${errors.serverErrorLines}; warnings ${errors.serverWarnLines})`],
    ['lost steps', String(result.lostSteps)],
    ['duplicate steps', String(result.duplicateSteps)],
    ['out-of-order steps', String(result.outOfOrderSteps)],
    ['idle subscriptions open at the end', `${idle.openAtEnd} / ${idle.subscriptions} (events received during the load: ${idle.eventsDuringLoad}); ended cleanly after cancel: ${idle.endedCleanly}`],
    ['server RSS at the clock / peak / VmHWM', `${fmt(memory.rssStartMb)} / ${fmt(memory.rssPeakMb)} / ${fmt(memory.vmHwmMb)} MB`],
    [`server RSS median first ${w} s / last ${w} s`, `${fmt(memory.rssFirstWindowMb)} / ${fmt(memory.rssLastWindowMb)} MB (${(memory.rssGrowth * 100).toFixed(1)} %)`],
    ['settled heap before / after (full GC)', `${fmt(memory.settledBefore.heapUsed / MB)} / ${fmt(memory.settledAfter.heapUsed / MB)} MB (${(memory.heapGrowth * 100).toFixed(1)} %)`],
    [
      'settled RSS / heap total / external before → after',
      `${fmt(memory.settledBefore.rss / MB)} / ${fmt(memory.settledBefore.heapTotal / MB)} / ${fmt(memory.settledBefore.external / MB)} → ${fmt(memory.settledAfter.rss / MB)} / ${fmt(memory.settledAfter.heapTotal / MB)} / ${fmt(memory.settledAfter.external / MB)} MB`,
    ],
    ['server CPU (measured phase + drain)', result.serverCpuPercent === null ? '—' : `${fmt(result.serverCpuPercent)} % of one core`],
  ];
  // Two columns, values left-aligned: they are sentences, not numbers to compare down a column.
  const width = Math.max(...rows.map(([label]) => label.length));
  return [...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`), ...errors.examples.map((example) => `  ! ${example}`)].join('\n');
}

export function loadTargets(result: LoadFigures): TargetCheck[] {
  const { errors, memory, idle } = result;
  const w = fmt(memory.windowSeconds, 0);
  return [
    {
      target: 'no error (runs, idle subscriptions, server error logs)',
      figure: `${errors.total} errors over ${result.runs.total} runs and ${idle.subscriptions} idle subscriptions`,
      met: errors.total === 0,
    },
    {
      target: `every idle subscription open through the load and then sees its run end`,
      figure: `${idle.openAtEnd} / ${idle.subscriptions} open, ${idle.endedCleanly} ended cleanly`,
      met: idle.openAtEnd === idle.subscriptions && idle.endedCleanly === idle.subscriptions,
    },
    {
      target: 'no lost step: stored steps = streamed steps for every run, none duplicated, in order',
      figure: `${result.lostSteps} lost, ${result.duplicateSteps} duplicated, ${result.outOfOrderSteps} out of order (${result.steps.stored} stored steps)`,
      met: result.lostSteps === 0 && result.duplicateSteps === 0 && result.outOfOrderSteps === 0 && result.steps.stored > 0,
    },
    {
      target: `bounded memory: median RSS of the last ${w} s ≤ ${BOUND} × the first ${w} s`,
      figure: `${fmt(memory.rssLastWindowMb)} vs ${fmt(memory.rssFirstWindowMb)} MB (${(memory.rssGrowth * 100).toFixed(1)} %)`,
      met: memory.rssLastWindowMb <= BOUND * memory.rssFirstWindowMb,
    },
    {
      target: `bounded memory: settled heap after the load ≤ ${BOUND} × before it`,
      figure: `${fmt(memory.settledAfter.heapUsed / MB)} vs ${fmt(memory.settledBefore.heapUsed / MB)} MB (${(memory.heapGrowth * 100).toFixed(1)} %)`,
      met: memory.settledAfter.heapUsed <= BOUND * memory.settledBefore.heapUsed,
    },
  ];
}

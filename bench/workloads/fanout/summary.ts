/**
 * The fan-out workload's result: medians over the repetitions of each variant, the defects summed,
 * CPU per delivered event, and the table.
 */
import type { DbKind } from '../../lib/airlock.ts';
import { fmt, fmtRatio, median, ratio, renderTable, type Quantiles } from '../../lib/stats.ts';
import type { FanoutOptions, Variant } from './options.ts';
import type { Defects } from './receipts.ts';
import type { FanoutSample } from './repetitions.ts';

export interface FanoutResult {
  readonly options: FanoutOptions;
  readonly kind: DbKind;
  readonly samples: readonly FanoutSample[];
  readonly median: Record<Variant, Quantiles>;
  /** Airlock ÷ raw, of the medians. */
  readonly ratio: { readonly p50: number | null; readonly p99: number | null };
  /** Summed over every Airlock repetition (each must be 0). */
  readonly airlockDefects: Defects;
  /** Two instances (null when not measured): p99 against one instance and against raw, defects, CPU per delivery. */
  readonly cluster: {
    readonly p99VsSingle: number | null;
    readonly p99VsRaw: number | null;
    readonly defects: Defects;
    readonly serverCpuUsPerDelivery: number;
    readonly redisCpuUsPerDelivery: number;
    readonly singleCpuUsPerDelivery: number;
    /** p99 lag of the subscribers on A (where the runs execute) and on B (events through Redis). */
    readonly p99OnA: number;
    readonly p99OnB: number;
  } | null;
  readonly table: string;
}

export function summarise(options: FanoutOptions, kind: DbKind, samples: readonly FanoutSample[]): FanoutResult {
  const of = (variant: Variant) => samples.filter((sample) => sample.variant === variant);
  const medians = (variant: Variant) => ({
    p50: median(of(variant).map((sample) => sample.lagMs.p50)),
    p99: median(of(variant).map((sample) => sample.lagMs.p99)),
    max: median(of(variant).map((sample) => sample.lagMs.max)),
  });
  const figures = { airlock: medians('airlock'), raw: medians('raw'), cluster: medians('cluster') };
  const sum = (variant: Variant, key: keyof Defects) => of(variant).reduce((total, sample) => total + sample[key], 0);
  const defectsOf = (variant: Variant): Defects => ({
    lost: sum(variant, 'lost'),
    duplicates: sum(variant, 'duplicates'),
    outOfOrder: sum(variant, 'outOfOrder'),
    unexpected: sum(variant, 'unexpected'),
    unfinished: sum(variant, 'unfinished'),
  });
  /** Median CPU per delivered event, µs (of the servers, or of Redis). */
  const perDelivery = (variant: Variant, cpu: (sample: FanoutSample) => number | null | undefined) =>
    median(of(variant).map((sample) => ((cpu(sample) ?? Number.NaN) * 1000) / sample.deliveries));
  const p99Ratio = ratio(figures.airlock.p99, figures.raw.p99);
  const measuredCluster = of('cluster').length > 0;
  const row = (variant: Variant, title: string) => {
    const runs = of(variant);
    return [
      title,
      String(runs[0]?.subscribers ?? 0),
      fmt(median(runs.map((sample) => sample.liveEvents)), 0),
      fmt(median(runs.map((sample) => sample.deliveries)), 0),
      fmt(figures[variant].p50),
      fmt(figures[variant].p99),
      fmt(figures[variant].max),
      variant === 'raw' ? '1.00×' : fmtRatio(ratio(figures[variant].p99, figures.raw.p99)),
      String(sum(variant, 'lost')),
      String(sum(variant, 'duplicates') + sum(variant, 'outOfOrder') + sum(variant, 'unexpected')),
      String(sum(variant, 'unfinished')),
      fmt(median(runs.map((sample) => sample.serverCpuMs ?? Number.NaN))),
      fmt(perDelivery(variant, (sample) => sample.serverCpuMs)),
      variant === 'cluster' ? fmt(perDelivery(variant, (sample) => sample.redisCpuMs)) : '—',
    ];
  };
  const steps = 3 * options.rounds + 2;
  const rows = [row('raw', 'raw ws broadcast (same frames, same pace)'), row('airlock', 'Airlock runEvents (graphql-ws), one instance')];
  if (measuredCluster) rows.push(row('cluster', 'Airlock runEvents, two instances over Redis'));
  const table = [
    `${options.runs} runs × ${steps} steps (K = ${options.rounds} tool rounds, ${options.latencyMs} ms per provider call), ` +
      `${options.clients} subscribers (${Math.round(options.clients / options.runs)} per run), ${options.repetitions} interleaved repetitions, medians; ` +
      `Airlock on ${kind === 'postgres' ? 'PostgreSQL' : 'PGlite'}` +
      (measuredCluster ? '; two instances: runs on A, subscribers half on A and half on B, lag measured from the first receipt by any subscriber of the run' : ''),
    renderTable(
      ['variant', 'clients', 'live events', 'deliveries', 'p50 lag ms', 'p99 lag ms', 'max lag ms', 'p99 × raw', 'lost', 'dup/order/extra', 'unfinished', 'server CPU ms', 'CPU µs/delivery', 'Redis CPU µs/delivery'],
      rows,
    ),
  ].join('\n');
  return {
    options,
    kind,
    samples,
    median: figures,
    ratio: { p50: ratio(figures.airlock.p50, figures.raw.p50), p99: p99Ratio },
    airlockDefects: defectsOf('airlock'),
    cluster: measuredCluster
      ? {
          p99VsSingle: ratio(figures.cluster.p99, figures.airlock.p99),
          p99VsRaw: ratio(figures.cluster.p99, figures.raw.p99),
          defects: defectsOf('cluster'),
          serverCpuUsPerDelivery: perDelivery('cluster', (sample) => sample.serverCpuMs),
          redisCpuUsPerDelivery: perDelivery('cluster', (sample) => sample.redisCpuMs),
          singleCpuUsPerDelivery: perDelivery('airlock', (sample) => sample.serverCpuMs),
          p99OnA: median(of('cluster').map((sample) => sample.p99ByInstance[0] ?? Number.NaN)),
          p99OnB: median(of('cluster').map((sample) => sample.p99ByInstance[1] ?? Number.NaN)),
        }
      : null,
    table,
  };
}

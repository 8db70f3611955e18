/**
 * The `subscribers` workload's figures (medians over the fan-out's repetitions), its targets
 * (issue 30) and its table. Lag per (watcher, event) is measured from the server's own time of the
 * event (`publishedAt`: Airlock's bus stamps it, the bare broadcaster stamps each frame as it starts
 * sending it) to its receipt, both on this machine's clock (`fanout/receipts.ts`); the lag from the
 * event's first receipt by any watcher is shown beside it. Spread is per event: last receipt − first.
 */
import type { DbKind } from '../../lib/airlock.ts';
import { fmt, fmtRatio, median, ratio, renderTable, type Quantiles } from '../../lib/stats.ts';
import type { TargetCheck } from '../../lib/targets.ts';
import type { Variant } from '../fanout/options.ts';
import type { Defects } from '../fanout/receipts.ts';
import type { FanoutSample } from '../fanout/repetitions.ts';
import type { FanoutResult } from '../fanout/summary.ts';
import type { IdleResult } from './idle.ts';

interface FanoutFigures {
  /** From the server's event time to receipt. */
  readonly lagMs: Quantiles;
  /** From the event's first receipt by any watcher. */
  readonly lagFromFirstMs: Quantiles;
  readonly spreadP99Ms: number;
  readonly cpuUsPerDelivery: number;
  readonly defects: Defects;
}

export interface SubscriberFigures {
  readonly idleRssRatio: number | null;
  readonly idleHeapRatio: number | null;
  readonly timersAdded: number;
  readonly airlock: FanoutFigures;
  readonly raw: FanoutFigures;
  readonly cluster: (FanoutFigures & { readonly p99OnA: number; readonly p99OnB: number; readonly publishesPerEvent: number }) | null;
  readonly cpuRatio: number | null;
  readonly p99Ratio: number | null;
}

function fanoutFigures(result: FanoutResult, variant: Variant): FanoutFigures {
  const samples = result.samples.filter((sample) => sample.variant === variant);
  const sum = (key: keyof Defects) => samples.reduce((total, sample) => total + sample[key], 0);
  const eventLag = (key: keyof Quantiles) => median(samples.map((sample) => sample.eventLagMs?.[key] ?? Number.NaN));
  return {
    lagMs: { p50: eventLag('p50'), p99: eventLag('p99'), max: eventLag('max') },
    lagFromFirstMs: result.median[variant],
    spreadP99Ms: median(samples.map((sample) => sample.spreadMs.p99)),
    cpuUsPerDelivery: median(samples.map((sample: FanoutSample) => ((sample.serverCpuMs ?? Number.NaN) * 1000) / sample.deliveries)),
    defects: { lost: sum('lost'), duplicates: sum('duplicates'), outOfOrder: sum('outOfOrder'), unexpected: sum('unexpected'), unfinished: sum('unfinished') },
  };
}

export function subscriberFigures(idle: IdleResult, fanout: FanoutResult): SubscriberFigures {
  const airlock = fanoutFigures(fanout, 'airlock');
  const raw = fanoutFigures(fanout, 'raw');
  const clusterSamples = fanout.samples.filter((sample) => sample.variant === 'cluster');
  return {
    idleRssRatio: ratio(idle.airlock.rssKbPerConnection, idle.bare.rssKbPerConnection),
    idleHeapRatio: ratio(idle.airlock.heapKbPerConnection, idle.bare.heapKbPerConnection),
    timersAdded: idle.airlock.timersAtN - idle.airlock.timersAtZero,
    airlock,
    raw,
    cluster:
      fanout.cluster && clusterSamples.length > 0
        ? {
            ...fanoutFigures(fanout, 'cluster'),
            p99OnA: fanout.cluster.p99OnA,
            p99OnB: fanout.cluster.p99OnB,
            publishesPerEvent: median(clusterSamples.map((sample) => (sample.redisPublishes ?? Number.NaN) / sample.liveEvents)),
          }
        : null,
    cpuRatio: ratio(airlock.cpuUsPerDelivery, raw.cpuUsPerDelivery),
    p99Ratio: ratio(airlock.lagMs.p99, raw.lagMs.p99),
  };
}

const clean = (defects: Defects) => defects.lost === 0 && defects.duplicates === 0 && defects.outOfOrder === 0 && defects.unexpected === 0 && defects.unfinished === 0;
const describe = (defects: Defects) => `lost ${defects.lost}, duplicated ${defects.duplicates}, out of order ${defects.outOfOrder}, unexpected ${defects.unexpected}, unfinished ${defects.unfinished}`;
const judged = (value: number | null, met: (value: number) => boolean) => (value === null || !Number.isFinite(value) ? null : met(value));

export function subscriberTargets(figures: SubscriberFigures, connections: number): TargetCheck[] {
  const { airlock, raw, cluster } = figures;
  const checks: TargetCheck[] = [
    { target: 'idle subscriber ≤ 2 × a bare ws connection (RSS)', figure: `${fmtRatio(figures.idleRssRatio)} (heap ${fmtRatio(figures.idleHeapRatio)})`, met: judged(figures.idleRssRatio, (value) => value <= 2) },
    { target: `not one timer per idle subscriber (fewer than ${connections / 10} more after the ramp)`, figure: `${figures.timersAdded} more for ${connections} subscribers`, met: figures.timersAdded < connections / 10 },
    { target: 'fan-out: server CPU per delivered event ≤ 1.5 × bare ws', figure: `${fmt(airlock.cpuUsPerDelivery)} vs ${fmt(raw.cpuUsPerDelivery)} µs (${fmtRatio(figures.cpuRatio)})`, met: judged(figures.cpuRatio, (value) => value <= 1.5) },
    {
      target: 'fan-out: p99 lag from the server’s event time ≤ 1.5 × bare ws and ≤ 500 ms',
      figure: `${fmt(airlock.lagMs.p99)} vs ${fmt(raw.lagMs.p99)} ms (${fmtRatio(figures.p99Ratio)})`,
      met: judged(figures.p99Ratio, (value) => value <= 1.5 && airlock.lagMs.p99 <= 500),
    },
    { target: 'fan-out: spread between watchers p99 ≤ 250 ms', figure: `${fmt(airlock.spreadP99Ms)} ms (bare ${fmt(raw.spreadP99Ms)} ms)`, met: judged(airlock.spreadP99Ms, (value) => value <= 250) },
    { target: 'fan-out: 0 lost, duplicated, out of order', figure: describe(airlock.defects), met: clean(airlock.defects) },
  ];
  if (cluster) {
    const p99Ratio = ratio(cluster.lagMs.p99, raw.lagMs.p99);
    const cpuRatio = ratio(cluster.cpuUsPerDelivery, raw.cpuUsPerDelivery);
    checks.push(
      {
        target: 'two instances (N/2 each): p99 ≤ 1.5 × bare and ≤ 500 ms, CPU per delivery ≤ 1.5 × bare, 0 lost / duplicated / out of order',
        figure: `p99 ${fmt(cluster.lagMs.p99)} ms (from the first receipt: on A ${fmt(cluster.p99OnA)}, on B ${fmt(cluster.p99OnB)}; ${fmtRatio(p99Ratio)}), CPU ${fmt(cluster.cpuUsPerDelivery)} µs (${fmtRatio(cpuRatio)}); ${describe(cluster.defects)}`,
        met: judged(p99Ratio, (value) => value <= 1.5 && cluster.lagMs.p99 <= 500 && (cpuRatio ?? Infinity) <= 1.5 && clean(cluster.defects)),
      },
      {
        target: 'two instances: Redis carries each event once per instance (≤ 2 PUBLISH per live step), not once per subscriber',
        figure: `${fmt(cluster.publishesPerEvent)} PUBLISH per live step`,
        met: judged(cluster.publishesPerEvent, (value) => value <= 2),
      },
    );
  }
  return checks;
}

export function subscriberTable(options: { clients: number; rounds: number; latencyMs: number; repetitions: number }, kind: DbKind, idle: IdleResult, fanout: FanoutResult, figures: SubscriberFigures): string {
  const mb = (bytes: number) => fmt(bytes / 1048576);
  const idleRow = (title: string, side: IdleResult['airlock']) => [
    title,
    String(idle.connections),
    fmt(side.rampMs / 1000),
    mb(side.zero.rss),
    mb(side.atN.rss),
    fmt(side.rssKbPerConnection),
    fmt(side.heapKbPerConnection),
    `${side.timersAtZero} → ${side.timersAtN}`,
  ];
  const fanRow = (title: string, subscribers: number, data: FanoutFigures) => [
    title,
    String(subscribers),
    fmt(data.lagMs.p50),
    fmt(data.lagMs.p99),
    fmt(data.lagMs.max),
    fmt(data.lagFromFirstMs.p99),
    fmt(data.spreadP99Ms),
    fmt(data.cpuUsPerDelivery),
    String(data.defects.lost),
    String(data.defects.duplicates),
    String(data.defects.outOfOrder),
  ];
  const rows = [fanRow('bare ws (same frames, same schedule)', idle.connections, figures.raw), fanRow('Airlock runEvents, one instance', idle.connections, figures.airlock)];
  if (figures.cluster) rows.push(fanRow('Airlock, two instances over Redis', idle.connections, figures.cluster));
  return [
    `Ramp: ${idle.connections} sockets from one driver process; Airlock on ${kind === 'postgres' ? 'PostgreSQL' : 'PGlite'}, idle runUpdates (admin, a filter matching one settled run); memory after a full GC`,
    renderTable(['server', 'sockets', 'ramp s', 'RSS MB at 0', 'RSS MB at N', 'RSS KB / socket', 'heap KB / socket', 'timers 0 → N'], [idleRow('bare ws server', idle.bare), idleRow('Airlock (idle runUpdates)', idle.airlock)]),
    '',
    `Fan-out: 1 run × ${3 * options.rounds + 2} steps (${options.latencyMs} ms per provider call), ${options.repetitions} interleaved repetitions, medians; lag from the server’s event time (publishedAt) to receipt` +
      (figures.cluster ? `; two instances: N/2 watchers on each, ${fmt(figures.cluster.publishesPerEvent)} PUBLISH per live step` : ''),
    renderTable(['variant', 'watchers', 'p50 lag ms', 'p99 lag ms', 'max lag ms', 'p99 from first receipt ms', 'spread p99 ms', 'CPU µs/delivery', 'lost', 'dup', 'out of order'], rows),
    fanout.cluster ? `(two instances: ${fmt(fanout.cluster.redisCpuUsPerDelivery)} µs of Redis CPU per delivery)` : '',
  ].join('\n');
}

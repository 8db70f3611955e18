/**
 * The `subscribers` workload (issue 30): live dashboard subscribers at scale, each figure against a
 * baseline measured in the same run.
 *
 * 1. Ramp and idle cost (`subscribers/idle.ts`): N graphql-ws clients (10 000; quick 1 000), one
 *    socket and one idle `runUpdates` subscription each, from one driver process; memory per idle
 *    subscriber (full GC before each reading, RSS and heap) against a bare `ws` server holding N
 *    plain connections; the server's active timers after the ramp.
 * 2. Fan-out: one run's steps to N `runEvents` watchers on one instance, against a bare `ws` server
 *    sending the same bytes on the same schedule to as many sockets: `runFanout` with one run
 *    (`fanout.ts`: the gate, the raw broadcaster, the same receipt code), and, with PostgreSQL and
 *    redis-server, two instances on a private Redis with N/2 watchers each (PUBLISH commands counted).
 *
 * File descriptors: every process holds at most one set of N sockets at a time (the driver closes
 * the idle subscribers before the fan-out opens its watchers), so each needs N + ~1 000; the limit
 * is inherited from the shell (`ulimit -n`), checked here before anything starts.
 */
import { readFileSync } from 'node:fs';
import { postgresAvailable, type DbKind } from '../lib/airlock.ts';
import { startDriver } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { runFanout } from './fanout.ts';
import type { FanoutResult } from './fanout/summary.ts';
import { measureIdle, type IdleResult } from './subscribers/idle.ts';
import { subscriberFigures, subscriberTable, subscriberTargets, type SubscriberFigures } from './subscribers/figures.ts';
import type { TargetCheck } from '../lib/targets.ts';

export interface SubscribersOptions {
  /** Sockets of the ramp and watchers of the fan-out (split over two instances there). */
  readonly clients: number;
  /** Tool rounds of the fan-out's run (3K + 2 steps) and the latency of each provider call, ms. */
  readonly rounds: number;
  readonly latencyMs: number;
  /** Interleaved repetitions of the fan-out (Airlock, raw, two instances). */
  readonly repetitions: number;
  readonly twoInstances: boolean;
}

export interface SubscribersResult {
  readonly options: SubscribersOptions;
  readonly kind: DbKind;
  /** The soft limit on open files every child inherits, and what one process needs here. */
  readonly fileDescriptors: { readonly limit: number; readonly needed: number };
  readonly idle: IdleResult;
  readonly fanout: FanoutResult;
  readonly figures: SubscriberFigures;
  readonly targets: readonly TargetCheck[];
  readonly table: string;
}

/** Sockets above N one process may hold besides its N (its modules, PostgreSQL pool, IPC, logs). */
const FD_HEADROOM = 1_000;

/** The soft "Max open files" of this process (its children inherit it). */
function openFileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((entry) => entry.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
}

export async function runSubscribers(options: SubscribersOptions): Promise<SubscribersResult> {
  const needed = options.clients + FD_HEADROOM;
  const limit = openFileLimit();
  if (limit < needed) {
    throw new Error(`${options.clients} sockets need ${needed} open files per process; the limit is ${limit}: start the bench under \`bash -c 'ulimit -n ${needed} && exec npm run bench'\``);
  }
  const kind: DbKind = (await postgresAvailable()) ? 'postgres' : 'pglite';
  const step = (text: string) => progress(`[subscribers] ${text}`);
  const driver = await startDriver('bench/bin/subscribers-driver.ts');
  let idle: IdleResult;
  try {
    idle = await measureIdle(kind, driver, options.clients, step);
  } finally {
    await driver.stop();
  }
  progressDone();
  step(`fan-out of one run to ${options.clients} runEvents watchers`);
  const fanout = await runFanout({
    clients: options.clients,
    runs: 1,
    rounds: options.rounds,
    latencyMs: options.latencyMs,
    repetitions: options.repetitions,
    twoInstances: options.twoInstances,
  });
  progressDone();
  const figures = subscriberFigures(idle, fanout);
  return {
    options,
    kind,
    fileDescriptors: { limit, needed },
    idle,
    fanout,
    figures,
    targets: subscriberTargets(figures, options.clients),
    table: subscriberTable(options, kind, idle, fanout, figures),
  };
}

import type { Db } from '../../db/database.ts';
import * as leases from '../../db/repositories/run-leases.ts';
import type { Logger } from '../../logger.ts';
import type { DrivenRuns } from './driven-runs.ts';

/** How often a process renews its leases and looks for runs whose lease lapsed, in milliseconds. */
export interface LeaseTimings {
  readonly heartbeatMs: number;
  readonly claimEveryMs: number;
}

/**
 * The heartbeat: as asked (default 10 s), but at most a third of the lease (and at least 10 ms), so
 * that two renewals can fail before a lease lapses. The claim timer: as asked (default 1 s), at
 * most the heartbeat.
 */
export function leaseTimings(options: { readonly leaseMs: number; readonly heartbeatMs?: number; readonly claimEveryMs?: number }): LeaseTimings {
  const heartbeatMs = Math.min(options.heartbeatMs ?? 10_000, Math.max(Math.floor(options.leaseMs / 3), 10));
  return { heartbeatMs, claimEveryMs: options.claimEveryMs ?? Math.min(heartbeatMs, 1_000) };
}

export interface LeaseKeeperDeps extends LeaseTimings {
  readonly db: Db;
  readonly logger: Logger;
  /** This process as a lease owner, and how long a renewed lease lasts. */
  readonly owner: string;
  readonly leaseMs: number;
  /** The runs this process drives, under the leases it renews. */
  readonly driven: DrivenRuns;
  /** Called every `claimEveryMs`: continue (or settle) the runs whose process is gone. */
  lookForOrphans(): Promise<unknown>;
}

export interface LeaseKeeper {
  /** One heartbeat now (the timer calls it every `heartbeatMs`); never rejects (a failure is logged). */
  renew(): Promise<void>;
  /** Stops both timers. */
  stop(): void;
}

/**
 * Keeps this process's leases: every heartbeat renews the lease of each run driven here, stops
 * the runs whose cancellation was asked for elsewhere (stored in their row), and stops the runs
 * this process no longer holds (taken over after a pause, or settled elsewhere) — only the drive
 * that held the lease, as a run parked meanwhile may be driven again under a newer one. A second
 * timer looks for the runs of processes that are gone. Neither timer keeps the process alive.
 */
export function startLeaseKeeper(deps: LeaseKeeperDeps): LeaseKeeper {
  const { db, logger, owner, leaseMs, driven } = deps;
  const renew = async () => {
    const held = driven.leases();
    await leases
      .renewLeases(db, owner, held, leaseMs)
      .then(({ cancelled, lost }) => {
        for (const runId of cancelled) driven.abort(runId);
        const gone = held.filter((lease) => lost.includes(lease.runId) && driven.holds(lease));
        if (gone.length > 0) logger.warn({ runs: gone.map((lease) => lease.runId) }, 'runs taken over by another process while this one was away; stopping them here');
        for (const lease of gone) lease.controller.abort();
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'run heartbeat failed'));
  };
  const heartbeat = setInterval(() => void renew(), deps.heartbeatMs);
  heartbeat.unref();
  const claimer = setInterval(() => {
    void deps.lookForOrphans().catch((error: unknown) => logger.warn({ err: error }, 'looking for runs whose process stopped failed'));
  }, deps.claimEveryMs);
  claimer.unref();
  return {
    renew,
    stop() {
      clearInterval(heartbeat);
      clearInterval(claimer);
    },
  };
}

import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/database.ts';
import { createDrivenRuns, type DrivenRun, type DrivenRuns } from '../../../src/services/run-host/driven-runs.ts';
import { leaseTimings, startLeaseKeeper, type LeaseKeeper } from '../../../src/services/run-host/lease-keeper.ts';
import { eventually, leasedRun, moveOn, openHostFixture, runOf, type HostFixture } from './fixture.ts';

/**
 * lease-keeper.ts: the heartbeat renews the leases of the runs driven here and stops those
 * cancelled elsewhere or taken over (only the drive that held the lease); the claim timer looks for
 * orphans; both stop with the keeper.
 */

const OWNER = 'keeper-instance';

const drive = (epoch = 1): DrivenRun => ({ controller: new AbortController(), handover: new AbortController(), done: new Promise(() => {}), userId: null, epoch });

describe('the lease keeper', () => {
  let f: HostFixture;
  const keepers: LeaseKeeper[] = [];
  beforeAll(async () => {
    f = await openHostFixture();
  });
  afterEach(() => keepers.splice(0).forEach((keeper) => keeper.stop()));
  afterAll(() => f.dispose());

  function keeper(driven: DrivenRuns, options: { db?: Db; heartbeatMs?: number; claimEveryMs?: number; lookForOrphans?: () => Promise<unknown> } = {}) {
    const started = startLeaseKeeper({
      db: options.db ?? f.db,
      logger: f.services.logger,
      owner: OWNER,
      leaseMs: 15_000,
      heartbeatMs: options.heartbeatMs ?? 60_000,
      claimEveryMs: options.claimEveryMs ?? 60_000,
      driven,
      lookForOrphans: options.lookForOrphans ?? (async () => 0),
    });
    keepers.push(started);
    return started;
  }
  /** A run this process holds, its lease about to lapse. */
  const heldRun = async () => {
    const run = await leasedRun(f.db, { owner: OWNER });
    await f.db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() + interval '1 second'` }).where('id', '=', run.id).execute();
    return run;
  };
  const expiryOf = async (runId: string) => (await runOf(f.db, runId)).lease_expires_at!.getTime();

  it('should renew at a third of the lease at most (at least 10 ms), and look for orphans at most once a heartbeat', () => {
    expect(leaseTimings({ leaseMs: 15_000 })).toEqual({ heartbeatMs: 5_000, claimEveryMs: 1_000 });
    expect(leaseTimings({ leaseMs: 60_000 })).toEqual({ heartbeatMs: 10_000, claimEveryMs: 1_000 });
    expect(leaseTimings({ leaseMs: 60_000, heartbeatMs: 2_000 })).toEqual({ heartbeatMs: 2_000, claimEveryMs: 1_000 });
    expect(leaseTimings({ leaseMs: 3_000, heartbeatMs: 20_000 })).toEqual({ heartbeatMs: 1_000, claimEveryMs: 1_000 });
    expect(leaseTimings({ leaseMs: 15 })).toEqual({ heartbeatMs: 10, claimEveryMs: 10 });
    expect(leaseTimings({ leaseMs: 600, claimEveryMs: 5_000 })).toEqual({ heartbeatMs: 200, claimEveryMs: 5_000 });
  });

  it('should renew the lease of every run driven here and stop none of them', async () => {
    const driven = createDrivenRuns();
    const [first, second] = [await heldRun(), await heldRun()];
    const drives = [drive(), drive()];
    driven.track(first.id, drives[0]!);
    driven.track(second.id, drives[1]!);
    const before = Date.now();
    await keeper(driven).renew();
    for (const run of [first, second]) expect(await expiryOf(run.id)).toBeGreaterThan(before + 10_000);
    expect(drives.map((entry) => entry.controller.signal.aborted)).toEqual([false, false]);
  });

  it('should stop a run whose cancellation was stored by another instance', async () => {
    const driven = createDrivenRuns();
    const run = await heldRun();
    await f.db.updateTable('runs').set({ cancel_requested_at: sql`now()` }).where('id', '=', run.id).execute();
    const entry = drive();
    driven.track(run.id, entry);
    await keeper(driven).renew();
    expect(entry.controller.signal.aborted).toBe(true);
  });

  it('should stop a run taken over by another process while this one was away, and say so', async () => {
    const driven = createDrivenRuns();
    const [kept, taken] = [await heldRun(), await heldRun()];
    await moveOn(f.db, taken.id);
    const [keptDrive, takenDrive] = [drive(), drive()];
    driven.track(kept.id, keptDrive);
    driven.track(taken.id, takenDrive);
    await keeper(driven).renew();
    expect([keptDrive.controller.signal.aborted, takenDrive.controller.signal.aborted]).toEqual([false, true]);
    expect(f.logs.text()).toContain(taken.id);
    expect(f.logs.text()).toContain('runs taken over by another process while this one was away; stopping them here');
  });

  it('should leave alone a newer drive of a run whose older lease was lost during the renewal', async () => {
    const driven = createDrivenRuns();
    const run = await heldRun();
    await moveOn(f.db, run.id);
    const [older, newer] = [drive(1), drive(2)];
    driven.track(run.id, older);
    const renewal = keeper(driven).renew();
    driven.track(run.id, newer); // the run parked and was driven again while the renewal was in flight
    await renewal;
    expect([older.controller.signal.aborted, newer.controller.signal.aborted]).toEqual([false, false]);
  });

  it('should log a failed renewal and go on', async () => {
    const driven = createDrivenRuns();
    const run = await heldRun();
    driven.track(run.id, drive());
    const unreachable = f.db.withPlugin({
      transformQuery: () => {
        throw new Error('the database is unreachable');
      },
      transformResult: async (args) => args.result,
    });
    await expect(keeper(driven, { db: unreachable }).renew()).resolves.toBeUndefined();
    expect(f.logs.text()).toContain('run heartbeat failed');
  });

  it('should renew on its own every heartbeat and look for orphans every claim interval, and do neither once stopped', async () => {
    const driven = createDrivenRuns();
    const run = await heldRun();
    driven.track(run.id, drive());
    const before = Date.now();
    let looks = 0;
    const ticking = keeper(driven, {
      heartbeatMs: 20,
      claimEveryMs: 20,
      lookForOrphans: async () => {
        looks += 1;
        if (looks === 1) throw new Error('a look failed');
      },
    });
    await eventually(async () => looks >= 3 && (await expiryOf(run.id)) > before + 10_000, 'heartbeats and looks');
    expect(f.logs.text()).toContain('looking for runs whose process stopped failed');
    ticking.stop();
    const stoppedAt = looks;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(looks).toBe(stoppedAt);
  });
});

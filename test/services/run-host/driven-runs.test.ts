import { describe, expect, it } from 'vitest';
import { createDrivenRuns, type DrivenRun } from '../../../src/services/run-host/driven-runs.ts';

const drive = (userId: string | null = 'user-a', epoch = 1): DrivenRun => ({
  controller: new AbortController(),
  handover: new AbortController(),
  done: Promise.resolve(),
  userId,
  epoch,
});

describe('the runs a process drives', () => {
  it('should stop one run at its next boundary, and say so, and know nothing of a run it does not drive', () => {
    const driven = createDrivenRuns();
    const [first, second] = [drive(), drive()];
    driven.track('r1', first);
    driven.track('r2', second);
    expect(driven.abort('r1')).toBe(true);
    expect(first.controller.signal.aborted).toBe(true);
    expect(second.controller.signal.aborted).toBe(false);
    expect(first.handover.signal.aborted).toBe(false);
    expect(driven.abort('elsewhere')).toBe(false);
  });

  it('should stop every run of one user and no other', () => {
    const driven = createDrivenRuns();
    const [a1, a2, b, anonymous] = [drive('user-a'), drive('user-a'), drive('user-b'), drive(null)];
    driven.track('a1', a1);
    driven.track('a2', a2);
    driven.track('b', b);
    driven.track('none', anonymous);
    driven.abortRunsOf('user-a');
    expect([a1, a2, b, anonymous].map((run) => run.controller.signal.aborted)).toEqual([true, true, false, false]);
  });

  it('should forget a run only for the drive that tracked it: a run driven again stays tracked', () => {
    const driven = createDrivenRuns();
    const parked = drive('user-a', 1);
    const resumed = drive('user-a', 2);
    driven.track('r', parked);
    driven.track('r', resumed);
    driven.forget('r', parked.controller);
    expect(driven.get('r')).toBe(resumed);
    driven.forget('r', resumed.controller);
    expect(driven.get('r')).toBeUndefined();
    expect(driven.ids()).toEqual([]);
  });

  it('should list the leases held with the drive holding each, and tell whether that drive still holds it', () => {
    const driven = createDrivenRuns();
    const first = drive('user-a', 3);
    driven.track('r', first);
    driven.track('s', drive('user-b', 1));
    const leases = driven.leases();
    expect(leases.map(({ runId, epoch }) => ({ runId, epoch }))).toEqual([
      { runId: 'r', epoch: 3 },
      { runId: 's', epoch: 1 },
    ]);
    expect(leases[0]!.controller).toBe(first.controller);
    expect(driven.holds(leases[0]!)).toBe(true);
    driven.track('r', drive('user-a', 4));
    expect(driven.holds(leases[0]!)).toBe(false);
    expect(driven.runs()).toHaveLength(2);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../src/db/database.ts';
import { suspendRun } from '../../../src/db/repositories/run-suspension.ts';
import { requestCancel } from '../../../src/db/repositories/runs.ts';
import { NotFoundError } from '../../../src/errors.ts';
import {
  cancelRun,
  cancelRunsOf,
  confirmCancellation,
  listenForCancellations,
  runCancellationSchema,
  type CancellationDeps,
} from '../../../src/services/run-host/cancellation.ts';
import { createDrivenRuns, type DrivenRun } from '../../../src/services/run-host/driven-runs.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { leasedRun, openHostFixture, runOf, seedScripted, type HostFixture } from './fixture.ts';

/**
 * cancellation.ts: a run stopped by its owner, an admin, a user's loss of access, or a
 * cancellation from another instance — wherever it is: driven here, waiting for approval, or
 * driven elsewhere (asked to stop, stored and broadcast); a broadcast acted on only when stored.
 */

const drive = (userId: string | null): DrivenRun => ({ controller: new AbortController(), handover: new AbortController(), done: Promise.resolve(), userId, epoch: 1 });

describe('cancelling runs', () => {
  let f: HostFixture;
  let owner: Actor;
  let stranger: Actor;
  let admin: Actor;
  beforeAll(async () => {
    f = await openHostFixture();
    ({ actor: owner } = await seedScripted(f));
    ({ actor: stranger } = await seedScripted(f));
    ({ actor: admin } = await seedScripted(f, { isAdmin: true }));
  });
  afterAll(() => f.dispose());

  const deps = (): CancellationDeps => ({ db: f.db, bus: f.services.bus, cancellations: f.services.cancellations, driven: createDrivenRuns() });
  const runOfOwner = () => leasedRun(f.db, { owner: 'some-instance', userId: owner.id });
  async function waitingRunOf(userId: string): Promise<RunRow> {
    const run = await leasedRun(f.db, { owner: 'some-instance', userId });
    return (await suspendRun(f.db, run.id, { sealedState: 'sealed', digest: 'd', iterations: 2, promptTokens: 20, completionTokens: 4, estimatedCost: 0.1 }, 1))!;
  }
  const eventsOf = (runId: string) => f.published.filter((event) => event.runId === runId).map((event) => event.type);

  it('should act on a cancellation from another instance only when the run’s row bears it out', async () => {
    const run = await runOfOwner();
    expect(await confirmCancellation(f.db, { runId: run.id })).toBe(false);
    expect(await confirmCancellation(f.db, { runId: randomUUID() })).toBe(false);
    expect(await requestCancel(f.db, run.id)).toBe(true);
    expect(await confirmCancellation(f.db, { runId: run.id })).toBe(true);
    expect(runCancellationSchema.safeParse({ runId: run.id }).success).toBe(true);
    expect(runCancellationSchema.safeParse({ runId: 'not-a-uuid' }).success).toBe(false);
  });

  it('should stop a run driven here at its next step boundary, touching neither its row nor other instances', async () => {
    const run = await runOfOwner();
    const cancelling = deps();
    const entry = drive(owner.id);
    cancelling.driven.track(run.id, entry);
    const broadcast = f.broadcast.length;
    expect(await cancelRun(cancelling, owner, run.id)).toMatchObject({ id: run.id, status: 'RUNNING' });
    expect(entry.controller.signal.aborted).toBe(true);
    expect(await runOf(f.db, run.id)).toMatchObject({ status: 'RUNNING', cancel_requested_at: null });
    expect(f.broadcast.length).toBe(broadcast);
  });

  it('should settle a run waiting for approval CANCELLED now, keeping its totals, and announce its end', async () => {
    const run = await waitingRunOf(owner.id);
    const settled = await cancelRun(deps(), owner, run.id);
    expect(settled).toMatchObject({ status: 'CANCELLED', termination_reason: 'CANCELLED', iterations: 2, prompt_tokens: 20, completion_tokens: 4 });
    expect(eventsOf(run.id)).toEqual(['finished']);
  });

  it('should ask the instance driving a run elsewhere to stop it: stored, then broadcast', async () => {
    const run = await runOfOwner();
    await cancelRun(deps(), admin, run.id);
    expect((await runOf(f.db, run.id)).cancel_requested_at).not.toBeNull();
    expect(f.broadcast.at(-1)).toEqual({ runId: run.id });
  });

  it('should not let anyone but its owner or an admin see a run to cancel it', async () => {
    const run = await runOfOwner();
    await expect(cancelRun(deps(), stranger, run.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(cancelRun(deps(), owner, randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    expect((await runOf(f.db, run.id)).cancel_requested_at).toBeNull();
  });

  it('should stop every run of a user who lost access — driven here or waiting — and no one else’s', async () => {
    const { actor: leaving } = await seedScripted(f);
    const cancelling = deps();
    const [leavingDrive, otherDrive] = [drive(leaving.id), drive(owner.id)];
    cancelling.driven.track(randomUUID(), leavingDrive);
    cancelling.driven.track(randomUUID(), otherDrive);
    const [waiting, othersWaiting] = [await waitingRunOf(leaving.id), await waitingRunOf(owner.id)];
    await cancelRunsOf(cancelling, leaving.id);
    expect([leavingDrive.controller.signal.aborted, otherDrive.controller.signal.aborted]).toEqual([true, false]);
    expect((await runOf(f.db, waiting.id)).status).toBe('CANCELLED');
    expect((await runOf(f.db, othersWaiting.id)).status).toBe('WAITING_FOR_APPROVAL');
  });

  it('should stop a run driven here when a cancellation for it is broadcast, until it stops listening', async () => {
    const cancelling = deps();
    const [first, second] = [drive(owner.id), drive(owner.id)];
    cancelling.driven.track('first', first);
    cancelling.driven.track('second', second);
    const stopListening = listenForCancellations(cancelling);
    f.services.cancellations.publish({ runId: 'first' });
    f.services.cancellations.publish({ runId: 'elsewhere' });
    stopListening();
    f.services.cancellations.publish({ runId: 'second' });
    expect([first.controller.signal.aborted, second.controller.signal.aborted]).toEqual([true, false]);
  });
});

import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../src/db/database.ts';
import { ForbiddenError } from '../../../src/errors.ts';
import type { RunBusEvent } from '../../../src/runtime/events.ts';
import { sealCheckpoint } from '../../../src/services/run-checkpoints.ts';
import { createRunHost, type RunHost, type RunHostOptions } from '../../../src/services/run-host/run-host.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { eventually, lapse, leasedRun, openHostFixture, runOf, seedScripted, type HostFixture } from './fixture.ts';

/**
 * run-host.ts: the parts wired into one host — a run started, streamed, stored and settled; started
 * detached; cancelled by its caller, by `cancel`, by a broadcast and by the heartbeat; the runs of a
 * gone process continued (or interrupted, when runs are not resumed); a stop that hands runs over
 * and starts nothing more.
 */
describe('the run host', () => {
  let f: HostFixture;
  let quick: { configurationId: string; actor: Actor };
  let slow: { configurationId: string; actor: Actor };
  const hosts: RunHost[] = [];
  beforeAll(async () => {
    f = await openHostFixture();
    quick = await seedScripted(f, { settings: { replies: [{ content: 'done.' }] } });
    slow = await seedScripted(f, { settings: { replies: [{ content: 'late.' }], delayMs: 30_000 } });
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
  });
  afterAll(() => f.dispose());

  function host(options: RunHostOptions = {}): RunHost {
    const created = createRunHost(f.services, { stopTimeoutMs: 500, ...options });
    hosts.push(created);
    return created;
  }
  async function drain(events: AsyncIterableIterator<RunBusEvent<RunRow>>): Promise<RunBusEvent<RunRow>[]> {
    const seen: RunBusEvent<RunRow>[] = [];
    for await (const event of events) {
      seen.push(event);
      if (event.type === 'finished' || event.type === 'suspended') break;
    }
    return seen;
  }
  const statusOf = async (runId: string, status: string) => ((await runOf(f.db, runId)).status === status ? runOf(f.db, runId) : undefined);

  it('should start a run whose caller receives its start, its steps and its end, stored in order and replayed from storage', async () => {
    const runs = host({ instanceId: 'host-a' });
    const started = await runs.start(quick.actor, { configurationId: quick.configurationId, prompt: 'hi' });
    const events = await drain(started.events);
    expect(events.map((event) => event.type)).toEqual(['started', 'step', 'step', 'finished']);
    expect(events.at(-1)).toMatchObject({ type: 'finished', run: { status: 'COMPLETED', final_content: 'done.', lease_owner: null, checkpoint: null } });
    expect((await runs.replay(started.run.id, 0)).map(({ sequence, step }) => [sequence, step.kind])).toEqual([
      [1, 'REQUEST'],
      [2, 'LLM'],
    ]);
    expect(await runs.replay(started.run.id, 1)).toHaveLength(1);
  });

  it('should run a detached run to its end with nobody reading', async () => {
    const run = await host().startDetached(quick.actor, { configurationId: quick.configurationId, prompt: 'hi' });
    expect(await eventually(() => statusOf(run.id, 'COMPLETED'), 'the detached run to complete')).toMatchObject({ final_content: 'done.' });
  });

  it('should cancel a run when its caller leaves, and when its owner cancels it', async () => {
    const runs = host();
    const left = await runs.start(slow.actor, { configurationId: slow.configurationId, prompt: 'hi' });
    left.cancel();
    expect((await drain(left.events)).at(-1)).toMatchObject({ type: 'finished', run: { status: 'CANCELLED' } });
    const cancelled = await runs.start(slow.actor, { configurationId: slow.configurationId, prompt: 'hi' });
    await runs.cancel(slow.actor, cancelled.run.id);
    expect((await drain(cancelled.events)).at(-1)).toMatchObject({ type: 'finished', run: { status: 'CANCELLED' } });
  });

  it('should stop a run driven here when another instance broadcasts its cancellation, or stores it for the heartbeat', async () => {
    const runs = host({ leaseMs: 300 });
    const broadcast = await runs.start(slow.actor, { configurationId: slow.configurationId, prompt: 'hi' });
    f.services.cancellations.publish({ runId: broadcast.run.id });
    expect((await drain(broadcast.events)).at(-1)).toMatchObject({ type: 'finished', run: { status: 'CANCELLED' } });
    const stored = await runs.start(slow.actor, { configurationId: slow.configurationId, prompt: 'hi' });
    await f.db.updateTable('runs').set({ cancel_requested_at: sql`now()` }).where('id', '=', stored.run.id).execute();
    expect((await drain(stored.events)).at(-1)).toMatchObject({ type: 'finished', run: { status: 'CANCELLED' } });
  });

  it('should settle INTERRUPTED the runs of a gone process when runs are not resumed, and announce their end', async () => {
    const orphan = await leasedRun(f.db, { owner: 'gone', userId: quick.actor.id, configurationId: quick.configurationId });
    await lapse(f.db, [orphan.id]);
    expect(await host({ resumeRuns: false }).settleStale()).toBeGreaterThanOrEqual(1);
    expect(await runOf(f.db, orphan.id)).toMatchObject({ status: 'FAILED', termination_reason: 'INTERRUPTED' });
    expect(f.published.filter((event) => event.runId === orphan.id).map((event) => event.type)).toEqual(['finished']);
  });

  it('should continue the runs of a gone process from their checkpoint, when their lease lapses and at start on an embedded database', async () => {
    const orphan = async () => {
      const run = await leasedRun(f.db, { owner: 'gone', userId: quick.actor.id, configurationId: quick.configurationId });
      await f.db.updateTable('runs').set({ checkpoint: sealCheckpoint(f.services.secrets, run.id, { start: { prompt: 'again' } }) }).where('id', '=', run.id).execute();
      return run;
    };
    const lapsed = await orphan();
    await lapse(f.db, [lapsed.id]);
    await host().settleStale();
    expect(await eventually(() => statusOf(lapsed.id, 'COMPLETED'), 'the lapsed run to be continued')).toMatchObject({ final_content: 'done.', resume_count: 1 });
    const live = await orphan();
    host({ claimOrphansAtStart: true });
    expect(await eventually(() => statusOf(live.id, 'COMPLETED'), 'the run of the previous process to be continued')).toMatchObject({ resume_count: 1 });
  });

  it('should hand its runs over when it stops (lease released, still RUNNING), then start and claim nothing', async () => {
    const runs = createRunHost(f.services, { stopTimeoutMs: 500, instanceId: 'stopping-host' });
    const started = await runs.start(slow.actor, { configurationId: slow.configurationId, prompt: 'hi' });
    await runs.stop();
    expect(await runOf(f.db, started.run.id)).toMatchObject({ status: 'RUNNING', lease_owner: null });
    await expect(runs.start(quick.actor, { configurationId: quick.configurationId, prompt: 'hi' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(await runs.settleStale()).toBe(0);
    expect(await runOf(f.db, started.run.id)).toMatchObject({ status: 'RUNNING', lease_owner: null });
    await started.events.return!();
  });
});

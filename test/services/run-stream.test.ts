import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, RunRow } from '../../src/db/database.ts';
import { type RunBusEventDraft } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { StoredStep } from '../../src/runtime/stored-step.ts';
import { deliverLostEnds } from '../../src/services/run-host/lost-ends.ts';
import { followRun, type RunStreamDeps, type RunStreamEvent } from '../../src/services/run-stream.ts';
import type { Actor } from '../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';
import { leasedRun } from './run-host/fixture.ts';

/**
 * services/run-stream.ts, without a transport: a watcher of a run gets its stored steps, then the
 * live ones, each once and in order; steps stored but never published (lost on the way from another
 * instance, or their instance died) are read from storage before whatever follows them.
 */

const ADMIN: Actor = { id: '00000000-0000-4000-8000-000000000001', name: 'admin', isAdmin: true };
const ZERO = { iterations: 0, usage: { promptTokens: 0, completionTokens: 0, cost: 0 } };

const stepOf = (sequence: number): StoredStep => ({ kind: 'LLM', round: sequence, durationMs: 1, content: `step ${sequence}`, contentRedacted: false });

/** A run's storage (what `replay` reads) and its bus, with every read counted. */
function streamFixture(db: Db) {
  const bus = createRunEventBus<RunRow>();
  const stored = new Map<string, { sequence: number; step: StoredStep }[]>();
  const reads: { runId: string; afterSequence: number }[] = [];
  const deps: RunStreamDeps = {
    db,
    runHost: {
      start: () => Promise.reject(new Error('not used: followRun only')),
      replay: async (runId, afterSequence) => {
        reads.push({ runId, afterSequence });
        return (stored.get(runId) ?? []).filter((entry) => entry.sequence > afterSequence);
      },
      subscribe: (runId) => bus.subscribe(runId),
      suspendedState: () => null,
    },
  };
  return {
    deps,
    reads,
    bus,
    /** Stores steps (committed, not yet published). */
    store(runId: string, ...sequences: number[]) {
      const steps = stored.get(runId) ?? [];
      stored.set(runId, [...steps, ...sequences.map((sequence) => ({ sequence, step: stepOf(sequence) }))]);
    },
    publishStep(runId: string, sequence: number) {
      bus.publish({ type: 'step', runId, sequence, stateVersion: 1, progress: ZERO, full: stepOf(sequence), filtered: stepOf(sequence) });
    },
    publishFinished(run: RunRow) {
      bus.publish({ type: 'finished', runId: run.id, finalContent: 'done.', run: { ...run, status: 'COMPLETED' } } satisfies RunBusEventDraft<RunRow>);
    },
  };
}

/** What a stream delivered, as `started`, `step 3`, `finished`. */
async function drain(stream: AsyncGenerator<RunStreamEvent>): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of stream) seen.push(event.kind === 'step' ? `step ${event.view.sequence}` : event.kind);
  return seen;
}

describe.each(TEST_DATABASES)('following a run (%s)', (kind) => {
  let db: Db;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    db = opened.handle.db;
    dispose = opened.dispose;
  });
  afterAll(() => dispose());

  it('should replay the stored steps, then go on live without repeating one the replay already gave', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    f.store(run.id, 1, 2);
    const stream = await followRun(f.deps, ADMIN, run.id);
    // Step 2 was stored before the replay read it and published after the subscription: both saw it.
    f.publishStep(run.id, 2);
    f.store(run.id, 3);
    f.publishStep(run.id, 3);
    f.publishFinished(run);
    expect(await drain(stream)).toEqual(['started', 'step 1', 'step 2', 'step 3', 'finished']);
  });

  it('should read from storage the steps never published, before the step, or the end, that follows them', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    f.store(run.id, 1);
    const stream = await followRun(f.deps, ADMIN, run.id);
    f.store(run.id, 2, 3, 4);
    f.publishStep(run.id, 4);
    f.store(run.id, 5);
    f.publishFinished(run);
    expect(await drain(stream)).toEqual(['started', 'step 1', 'step 2', 'step 3', 'step 4', 'step 5', 'finished']);
    expect(f.reads.map((read) => read.afterSequence)).toEqual([0, 1, 4]);
  });

  it('should read a gap once for all the watchers waiting at the same step', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    const streams = await Promise.all([followRun(f.deps, ADMIN, run.id), followRun(f.deps, ADMIN, run.id), followRun(f.deps, ADMIN, run.id)]);
    f.store(run.id, 1, 2);
    f.publishStep(run.id, 2);
    f.publishFinished(run);
    const seen = await Promise.all(streams.map(drain));
    for (const events of seen) expect(events).toEqual(['started', 'step 1', 'step 2', 'finished']);
    // Three replays at the start, then one read of the gap before step 2 and one before the end.
    expect(f.reads.map((read) => read.afterSequence)).toEqual([0, 0, 0, 0, 2]);
  });

  it('should hand every watcher of the same view the same live event objects (one execution each: shared-execution.ts), and read the run once for an end that comes without it', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    let runReads = 0;
    // The database, with the reads of the runs table counted.
    const counting = new Proxy(db, {
      get(target, property) {
        if (property !== 'selectFrom') return Reflect.get(target, property);
        return (table: Parameters<Db['selectFrom']>[0]) => {
          if (table === 'runs') runReads++;
          return target.selectFrom(table);
        };
      },
    });
    const deps = { ...f.deps, db: counting };
    const watchers = await Promise.all([followRun(deps, ADMIN, run.id), followRun(deps, ADMIN, run.id)]);
    const live = async (stream: AsyncGenerator<RunStreamEvent>) => {
      const events: RunStreamEvent[] = [];
      for await (const event of stream) if (event.publishedAt !== null) events.push(event);
      return events;
    };
    f.store(run.id, 1);
    f.publishStep(run.id, 1);
    f.bus.publish({ type: 'resumed', runId: run.id, fromSequence: 2, reason: 'LEASE_EXPIRED', run });
    await db.updateTable('runs').set({ status: 'COMPLETED', finished_at: new Date() }).where('id', '=', run.id).execute();
    runReads = 0;
    f.bus.publish({ type: 'finished', runId: run.id, finalContent: 'the answer', run: null });
    const [first, second] = await Promise.all(watchers.map(live));
    expect(first!.map((event) => event.kind)).toEqual(['step', 'resumed', 'finished']);
    first!.forEach((event, index) => expect(second![index]).toBe(event));
    expect(first!.at(-1)).toMatchObject({ run: { status: 'COMPLETED', final_content: 'the answer' } });
    expect(runReads).toBe(1);
  });

  it('should end the watchers of a run settled without its finished event (its process died in between), once the event had time to come', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    const watchers = await Promise.all([followRun(f.deps, ADMIN, run.id), followRun(f.deps, ADMIN, run.id)]);
    const seen = watchers.map(drain);
    f.store(run.id, 1, 2);
    f.publishStep(run.id, 1);
    // Step 2 and the end are stored; the process dies before it publishes either.
    const finishedAt = new Date();
    await db.updateTable('runs').set({ status: 'COMPLETED', finished_at: finishedAt, final_content: 'stored answer' }).where('id', '=', run.id).execute();
    // Within the grace its own event may still come: nothing is delivered.
    expect(await deliverLostEnds({ db, bus: f.bus }, 60_000)).toBe(0);
    expect(f.bus.watchedRuns()).toEqual([run.id]);
    expect(await deliverLostEnds({ db, bus: f.bus }, -1)).toBe(1);
    for (const events of await Promise.all(seen)) expect(events).toEqual(['started', 'step 1', 'step 2', 'finished']);
    expect(f.bus.watchedRuns()).toEqual([]);
    expect(await deliverLostEnds({ db, bus: f.bus }, -1)).toBe(0);
  });

  it('should serve a settled run from storage alone, with no subscription to the bus', async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db);
    await db.updateTable('runs').set({ status: 'COMPLETED', finished_at: new Date() }).where('id', '=', run.id).execute();
    f.store(run.id, 1, 2);
    const stream = await followRun(f.deps, ADMIN, run.id);
    expect(f.bus.subscriberCount()).toBe(0);
    expect(await drain(stream)).toEqual(['started', 'step 1', 'step 2', 'finished']);
  });

  it("should refuse another user's run as not found, and release its subscription", async () => {
    const f = streamFixture(db);
    const run = await leasedRun(db, { userId: null });
    const stranger: Actor = { id: '00000000-0000-4000-8000-000000000002', name: 'stranger', isAdmin: false };
    await expect(followRun(f.deps, stranger, run.id)).rejects.toMatchObject({ name: 'NotFoundError' });
    expect(f.bus.subscriberCount()).toBe(0);
  });
});

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../src/db/database.ts';
import { createSecretBox } from '../../../src/db/secret-box.ts';
import { releaseLease } from '../../../src/db/repositories/run-leases.ts';
import type { LoopSettings } from '../../../src/runtime/loop-session.ts';
import type { ResumePoint } from '../../../src/runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../../../src/runtime/run.ts';
import type { RunRecorder } from '../../../src/runtime/run-recorder.ts';
import { sealCheckpoint, type RunCheckpoint } from '../../../src/services/run-checkpoints.ts';
import type { Drive } from '../../../src/services/run-host/drive.ts';
import { CHECKPOINT_UNREADABLE, CLAIM_BATCH, claimOrphans, type TakeoverDeps } from '../../../src/services/run-host/takeover.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { eventually, lapse, leasedRun, openHostFixture, runOf, seedScripted, type HostFixture } from './fixture.ts';

/**
 * takeover.ts: the runs of processes that are gone — claimed (a new epoch, this process's lease),
 * announced as resumed after their stored steps, and continued from their sealed checkpoint; a
 * cancellation asked for meanwhile honoured instead; an unreadable checkpoint settled INTERRUPTED.
 */

const SETTINGS: LoopSettings = { systemPrompt: '', temperature: null, maxTokens: null, maxIterations: 5, quarantineToolOutput: false };
const STATE = { messages: [{ role: 'user' as const, content: 'hello' }], iterations: 3, usage: { promptTokens: 40, completionTokens: 9, cost: 0.25 }, lastContent: null };
const POINT: ResumePoint = { at: 'call', round: 4, state: STATE };

describe('taking over the runs of processes that are gone', () => {
  let f: HostFixture;
  let configurationId: string;
  let actor: Actor;
  beforeAll(async () => {
    f = await openHostFixture();
    ({ configurationId, actor } = await seedScripted(f, { settings: { replies: [{ content: 'continued' }] } }));
  });
  afterAll(() => f.dispose());

  function deps(options: { resumeRuns?: boolean; stopping?: boolean } = {}) {
    const drives: Drive[] = [];
    const stopped = new AbortController();
    if (options.stopping) stopped.abort();
    const takeover: TakeoverDeps = {
      services: f.services,
      owner: 'this-instance',
      leaseMs: 15_000,
      resumeRuns: options.resumeRuns ?? true,
      stopSignal: stopped.signal,
      drive: (drive) => void drives.push(drive),
    };
    return { takeover, drives };
  }
  /** A RUNNING run of a gone process with `checkpoint` sealed for it (a string is stored as it is). */
  async function orphan(checkpoint: RunCheckpoint | string | null, options: { lapsed?: boolean } = {}): Promise<RunRow> {
    const run = await leasedRun(f.db, { owner: 'instance-gone', userId: actor.id, configurationId });
    const sealed = checkpoint === null || typeof checkpoint === 'string' ? checkpoint : sealCheckpoint(f.services.secrets, run.id, checkpoint);
    await f.db.updateTable('runs').set({ checkpoint: sealed }).where('id', '=', run.id).execute();
    if (options.lapsed ?? true) await lapse(f.db, [run.id]);
    return run;
  }
  const storeSteps = async (runId: string, count: number) => {
    for (let sequence = 1; sequence <= count; sequence++) {
      await f.db.insertInto('run_steps').values({ run_id: runId, sequence, kind: 'LLM', round: 1, duration_ms: null, payload: JSON.stringify({ sequence }), epoch: 1 }).execute();
    }
  };
  const eventsOf = (runId: string) => f.published.filter((event) => event.runId === runId);
  const driveOf = (drives: Drive[], runId: string) => drives.find((drive) => drive.run.id === runId);

  it('should claim a run whose lease lapsed, announce it resumed after its stored steps, and start it again from its prompt as its user', async () => {
    const run = await orphan({ start: { prompt: 'hi' } });
    await storeSteps(run.id, 3);
    const { takeover, drives } = deps();
    expect(await claimOrphans(takeover)).toBeGreaterThanOrEqual(1);
    expect(await runOf(f.db, run.id)).toMatchObject({ status: 'RUNNING', lease_owner: 'this-instance', lease_epoch: 2, resume_count: 1 });
    expect(eventsOf(run.id)).toEqual([expect.objectContaining({ type: 'resumed', fromSequence: 4, reason: 'LEASE_EXPIRED', run: expect.objectContaining({ id: run.id, checkpoint: null }) })]);
    const drive = driveOf(drives, run.id)!;
    expect(drive).toMatchObject({ epoch: 2, afterSequence: 3 });
    expect(drive.context).toBeUndefined();
    const steps: RunStep[] = [];
    expect(await drive.loop({ signal: new AbortController().signal, onStep: (step) => void steps.push(step) })).toMatchObject({ status: 'COMPLETED', finalContent: 'continued' });
    expect(steps[0]).toMatchObject({ kind: 'REQUEST' });
  });

  it('should continue a run from its resume point with the options it ran with, and store a decision claimed before it died first', async () => {
    const approval = { kind: 'APPROVAL', round: 4, approverId: actor.id, approverName: actor.name, approved: true, digest: 'd', decidedAt: new Date(0).toISOString() } as const;
    const run = await orphan({ point: POINT, settings: SETTINGS, allowList: ['read_records'], approval });
    const { takeover, drives } = deps();
    await claimOrphans(takeover);
    const drive = driveOf(drives, run.id)!;
    expect(drive).toMatchObject({ progress: { iterations: 3, usage: STATE.usage }, context: { settings: SETTINGS, allowList: ['read_records'] } });
    const required: unknown[] = [];
    const recorder = { leaseLost: false, recordRequiredStep: async (step: RunStep, point?: ResumePoint) => void required.push({ step, point }) } as unknown as RunRecorder<RunRow>;
    expect(await drive.before!(recorder)).toBe(true);
    expect(required).toEqual([{ step: approval, point: POINT }]);
  });

  it('should name a run handed over by a graceful stop, and on an embedded database at start every run of another process', async () => {
    const handed = await orphan({ start: { prompt: 'hi' } }, { lapsed: false });
    expect(await releaseLease(f.db, { runId: handed.id, epoch: 1 })).toBe(true);
    const live = await orphan({ start: { prompt: 'hi' } }, { lapsed: false });
    const { takeover, drives } = deps();
    await claimOrphans(takeover);
    expect(driveOf(drives, live.id)).toBeUndefined();
    expect(eventsOf(handed.id)).toEqual([expect.objectContaining({ type: 'resumed', reason: 'HANDED_OVER' })]);
    await claimOrphans(takeover, true);
    expect(eventsOf(live.id)).toEqual([expect.objectContaining({ type: 'resumed', reason: 'RESTARTED' })]);
  });

  it('should settle INTERRUPTED a run whose checkpoint cannot be opened (another key, or none), and drive nothing', async () => {
    const otherKey = createSecretBox(randomBytes(32));
    const foreign = await orphan(null);
    await f.db.updateTable('runs').set({ checkpoint: sealCheckpoint(otherKey, foreign.id, { start: { prompt: 'hi' } }) }).where('id', '=', foreign.id).execute();
    const missing = await orphan(null);
    const { takeover, drives } = deps();
    await claimOrphans(takeover);
    for (const run of [foreign, missing]) {
      expect(await runOf(f.db, run.id)).toMatchObject({ status: 'FAILED', termination_reason: 'INTERRUPTED', error_message: CHECKPOINT_UNREADABLE, checkpoint: null });
      expect(eventsOf(run.id).map((event) => event.type)).toEqual(['finished']);
      expect(driveOf(drives, run.id)).toBeUndefined();
    }
  });

  it('should honour a cancellation asked for while the run had no process: settled CANCELLED with its usage so far, nothing run', async () => {
    const run = await orphan({ point: POINT, settings: SETTINGS, allowList: null });
    await f.db.updateTable('runs').set({ cancel_requested_at: sql`now()` }).where('id', '=', run.id).execute();
    const { takeover, drives } = deps();
    await claimOrphans(takeover);
    const settled: RunOutcome[] = [];
    const recorder = { leaseLost: false, settle: async (outcome: RunOutcome) => (settled.push(outcome), true) } as unknown as RunRecorder<RunRow>;
    expect(await driveOf(drives, run.id)!.before!(recorder)).toBe(false);
    expect(await runOf(f.db, run.id)).toMatchObject({ status: 'CANCELLED', termination_reason: 'CANCELLED', iterations: 3, prompt_tokens: 40, completion_tokens: 9 });
    expect(eventsOf(run.id).map((event) => event.type)).toEqual(['resumed', 'finished']);
  });

  it('should claim nothing when runs are not resumed or the host is stopping', async () => {
    const run = await orphan({ start: { prompt: 'hi' } });
    expect(await claimOrphans(deps({ resumeRuns: false }).takeover)).toBe(0);
    expect(await claimOrphans(deps({ stopping: true }).takeover)).toBe(0);
    expect(await runOf(f.db, run.id)).toMatchObject({ lease_owner: 'instance-gone', lease_epoch: 1 });
    // Left for the next look (a later test's claims would take it): claimed here.
    await claimOrphans(deps().takeover);
  });

  it('should look again at once after a full batch, until every orphan is claimed', async () => {
    const runs = await Promise.all(Array.from({ length: CLAIM_BATCH + 3 }, () => orphan({ start: { prompt: 'hi' } })));
    const { takeover, drives } = deps();
    expect(await claimOrphans(takeover)).toBe(CLAIM_BATCH);
    await eventually(() => runs.every((run) => driveOf(drives, run.id)), 'every orphan to be claimed');
    expect(new Set(drives.map((drive) => drive.run.id)).size).toBe(drives.length);
  });
});

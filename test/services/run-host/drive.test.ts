import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../src/db/database.ts';
import { createRunRepository } from '../../../src/db/run-repository.ts';
import { listRunSteps } from '../../../src/db/repositories/runs.ts';
import { observeRun } from '../../../src/observability/run-telemetry.ts';
import type { Suspension } from '../../../src/runtime/approval.ts';
import { LoopHandedOver, type LoopSettings } from '../../../src/runtime/loop-session.ts';
import type { ResumePoint } from '../../../src/runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../../../src/runtime/run.ts';
import { openSuspendedRun } from '../../../src/services/approvals.ts';
import { openCheckpoint } from '../../../src/services/run-checkpoints.ts';
import { driveRun, FAILED_UNEXPECTEDLY, type Drive, type DrivenRequest } from '../../../src/services/run-host/drive.ts';
import { createDrivenRuns } from '../../../src/services/run-host/driven-runs.ts';
import { eventually, leasedRun, moveOn, openHostFixture, runOf, type HostFixture } from './fixture.ts';

/**
 * drive.ts: a run driven here — its recorder (steps under the lease's epoch), its loop (a checkpoint
 * at each boundary when runs are durable), and its end: settled, parked with its state sealed, or
 * handed over; tracked until that end.
 */

const SETTINGS: LoopSettings = { systemPrompt: '', temperature: null, maxTokens: null, maxIterations: 5, quarantineToolOutput: false };
const STATE = { messages: [{ role: 'user' as const, content: 'hello' }], iterations: 1, usage: { promptTokens: 10, completionTokens: 5, cost: 0 }, lastContent: null };
const POINT: ResumePoint = { at: 'call', round: 2, state: STATE };
const COMPLETED: RunOutcome = { status: 'COMPLETED', terminationReason: 'COMPLETED', truncated: false, iterations: 1, finalContent: 'done.', usage: STATE.usage, errorMessage: null };
const CANCELLED: RunOutcome = { ...COMPLETED, status: 'CANCELLED', terminationReason: 'CANCELLED', finalContent: null };
const SUSPENSION: Suspension = { state: STATE, round: 1, calls: [{ id: 'c1', name: 'update_records', arguments: {} }], previews: [], digest: 'digest-1' };
const LLM_STEP: RunStep = { kind: 'LLM', round: 1, content: 'thinking', thinking: null, requestedToolCalls: [], usage: STATE.usage, finishReason: 'stop', durationMs: 1 };

describe('driving a run', () => {
  let f: HostFixture;
  beforeAll(async () => {
    f = await openHostFixture();
  });
  afterAll(() => f.dispose());

  /** Drives `run` with `loop` and waits for the drive's end. */
  async function drive(run: RunRow, loop: Drive['loop'], options: { resumeRuns?: boolean; stopping?: boolean; before?: Drive['before']; context?: Drive['context'] } = {}) {
    const driven = createDrivenRuns();
    const stopped = new AbortController();
    if (options.stopping) stopped.abort();
    const deps = {
      db: f.db,
      secrets: f.services.secrets,
      bus: f.services.bus,
      repository: createRunRepository(f.db, f.services.writer),
      driven,
      resumeRuns: options.resumeRuns ?? true,
      stopSignal: stopped.signal,
    };
    driveRun(deps, {
      run,
      epoch: run.lease_epoch,
      telemetry: observeRun(undefined, { runId: run.id, configurationId: '', userId: null, level: run.privacy_level }),
      logger: f.services.logger,
      loop,
      ...(options.before ? { before: options.before } : {}),
      ...(options.context ? { context: options.context } : {}),
    });
    const tracked = driven.get(run.id);
    expect(tracked?.epoch).toBe(run.lease_epoch);
    await tracked!.done;
    expect(driven.get(run.id)).toBeUndefined();
    return { row: await runOf(f.db, run.id), tracked: tracked! };
  }
  const eventsOf = (runId: string) => f.published.filter((event) => event.runId === runId).map((event) => event.type);

  it('should store each step under the lease, settle the outcome once after them, end the lease and announce the end', async () => {
    const run = await leasedRun(f.db, { checkpoint: 'sealed-start' });
    const { row } = await drive(run, async (request) => {
      await request.onStep(LLM_STEP);
      return COMPLETED;
    });
    expect(row).toMatchObject({ status: 'COMPLETED', final_content: 'done.', iterations: 1, checkpoint: null, lease_owner: null });
    expect((await listRunSteps(f.db, run.id, 0, 10)).map((step) => [step.sequence, step.kind, step.epoch])).toEqual([[1, 'LLM', 1]]);
    expect(eventsOf(run.id)).toEqual(['step', 'finished']);
  });

  it('should park a run waiting for approval with its state sealed (the context the loop reported) and announce it', async () => {
    const run = await leasedRun(f.db);
    const { row } = await drive(run, async (request) => {
      request.onPrepared!({ settings: SETTINGS, allowList: ['update_records'] });
      return { ...COMPLETED, status: 'WAITING_FOR_APPROVAL', terminationReason: null, finalContent: null, suspension: SUSPENSION };
    });
    expect(row).toMatchObject({ status: 'WAITING_FOR_APPROVAL', suspended_digest: 'digest-1', iterations: 1, prompt_tokens: 10, lease_owner: null });
    expect(openSuspendedRun({ secrets: f.services.secrets, logger: f.services.logger }, row)).toEqual({ settings: SETTINGS, allowList: ['update_records'], suspension: SUSPENSION });
    expect(eventsOf(run.id)).toEqual(['suspended']);
  });

  it('should fail a run that needs an approval when its state cannot be stored (no context): no promise of a resume', async () => {
    const run = await leasedRun(f.db);
    const { row } = await drive(run, async () => ({ ...COMPLETED, status: 'WAITING_FOR_APPROVAL', terminationReason: null, finalContent: null, suspension: SUSPENSION }));
    expect(row).toMatchObject({ status: 'FAILED', error_message: 'The run needed an approval but its state could not be stored.', iterations: 1 });
  });

  it('should fail a run whose loop threw, with the generic message (the details go to the log)', async () => {
    const run = await leasedRun(f.db);
    const { row } = await drive(run, async () => {
      throw new Error('a bug with details');
    });
    expect(row).toMatchObject({ status: 'FAILED', termination_reason: 'PROVIDER_FAILED', error_message: FAILED_UNEXPECTEDLY });
    expect(f.logs.text()).toContain('a bug with details');
  });

  it('should hand a run over (lease released, still RUNNING) when its loop stopped at a boundary for a handover', async () => {
    const run = await leasedRun(f.db, { checkpoint: 'sealed-start' });
    const { row } = await drive(run, async () => {
      throw new LoopHandedOver();
    });
    expect(row).toMatchObject({ status: 'RUNNING', lease_owner: null, lease_epoch: 1, checkpoint: 'sealed-start' });
    expect(row.lease_expires_at!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(eventsOf(run.id)).toEqual([]);
  });

  it('should store a checkpoint sealed for its run under the lease, and stop the loop once the lease moved on', async () => {
    const run = await leasedRun(f.db);
    let stoppedSignal: AbortSignal | undefined;
    const { row } = await drive(
      run,
      async (request: DrivenRequest) => {
        await request.checkpoint!(POINT);
        const stored = await runOf(f.db, run.id);
        expect(openCheckpoint(f.services.secrets, run.id, stored.checkpoint!)).toEqual({ point: POINT, settings: SETTINGS, allowList: null });
        await moveOn(f.db, run.id);
        stoppedSignal = request.signal;
        await request.checkpoint!(POINT); // throws LoopHandedOver: the run is another process's
        return COMPLETED;
      },
      { context: { settings: SETTINGS, allowList: null } },
    );
    expect(stoppedSignal?.aborted).toBe(true);
    expect(row).toMatchObject({ status: 'RUNNING', lease_epoch: 2, lease_owner: 'instance-b' });
  });

  it('should give the loop no checkpoint when runs are not durable', async () => {
    const run = await leasedRun(f.db);
    let checkpoint: unknown = 'unset';
    await drive(run, async (request) => ((checkpoint = request.checkpoint), COMPLETED), { resumeRuns: false });
    expect(checkpoint).toBeUndefined();
  });

  it('should hand over a run cancelled by a stop when runs are durable, and interrupt it otherwise', async () => {
    const durable = await leasedRun(f.db, { checkpoint: 'sealed-start' });
    expect((await drive(durable, async () => CANCELLED, { stopping: true })).row).toMatchObject({ status: 'RUNNING', lease_owner: null });
    const plain = await leasedRun(f.db);
    expect((await drive(plain, async () => CANCELLED, { stopping: true, resumeRuns: false })).row).toMatchObject({
      status: 'FAILED',
      termination_reason: 'INTERRUPTED',
      error_message: 'The server stopped before the run finished.',
    });
    const cancelled = await leasedRun(f.db);
    expect((await drive(cancelled, async () => CANCELLED)).row).toMatchObject({ status: 'CANCELLED', termination_reason: 'CANCELLED' });
  });

  it('should run nothing more when the step before the loop says so, and the loop after it otherwise', async () => {
    const run = await leasedRun(f.db);
    let looped = false;
    const { row } = await drive(run, async () => ((looped = true), COMPLETED), { before: async () => false });
    expect(looped).toBe(false);
    expect(row.status).toBe('RUNNING');
    const next = await leasedRun(f.db);
    const order: string[] = [];
    await drive(next, async () => (order.push('loop'), COMPLETED), { before: async (recorder) => (order.push(recorder.leaseLost ? 'lost' : 'before'), true) });
    expect(order).toEqual(['before', 'loop']);
  });

  it('should stop the loop and write nothing more once a step write finds the lease moved on', async () => {
    const run = await leasedRun(f.db);
    await moveOn(f.db, run.id);
    let signal: AbortSignal | undefined;
    const { row } = await drive(run, async (request) => {
      signal = request.signal;
      await request.onStep(LLM_STEP);
      await eventually(() => request.signal.aborted, 'the loop to be stopped');
      return CANCELLED;
    });
    expect(signal?.aborted).toBe(true);
    expect(row).toMatchObject({ status: 'RUNNING', lease_epoch: 2 });
    expect(await listRunSteps(f.db, run.id, 0, 10)).toEqual([]);
  });
});

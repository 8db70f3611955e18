import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../src/db/database.ts';
import { suspendRun } from '../../../src/db/repositories/run-suspension.ts';
import { observeRun } from '../../../src/observability/run-telemetry.ts';
import type { Suspension } from '../../../src/runtime/approval.ts';
import type { LoopSettings } from '../../../src/runtime/loop-session.ts';
import type { ResumePoint } from '../../../src/runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../../../src/runtime/run.ts';
import type { RunRecorder } from '../../../src/runtime/run-recorder.ts';
import { sealSuspendedRun } from '../../../src/services/approvals.ts';
import { openCheckpoint } from '../../../src/services/run-checkpoints.ts';
import type { SuspendedRun } from '../../../src/services/run-execution.ts';
import { decideRun, decisionOf, storeDecision, type DecisionDeps } from '../../../src/services/run-host/decisions.ts';
import type { Drive } from '../../../src/services/run-host/drive.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { leasedRun, openHostFixture, runOf, seedScripted, type HostFixture } from './fixture.ts';

/**
 * decisions.ts: a decision on a waiting run — its APPROVAL step and the point its turn resumes
 * from, claimed with the sealed checkpoint, and stored before any call of the turn runs (or the run
 * fails and nothing of the turn runs).
 */

const SETTINGS: LoopSettings = { systemPrompt: '', temperature: null, maxTokens: null, maxIterations: 5, quarantineToolOutput: false };
const STATE = { messages: [{ role: 'user' as const, content: 'update it' }], iterations: 2, usage: { promptTokens: 30, completionTokens: 7, cost: 0.5 }, lastContent: null };
const SUSPENSION: Suspension = { state: STATE, round: 2, calls: [{ id: 'c1', name: 'update_records', arguments: { id: 1 } }], previews: [], digest: 'digest-1' };
const SUSPENDED: SuspendedRun = { suspension: SUSPENSION, settings: SETTINGS, allowList: ['update_records'] };
const APPROVER: Actor = { id: 'approver-id', name: 'approver', isAdmin: true };
const DECIDED_AT = '2026-12-02T10:00:00.000Z';

/** A recorder that stores required steps (or fails to), and counts settlements. */
function fakeRecorder(options: { readonly fail?: boolean; readonly leaseLost?: boolean } = {}) {
  const required: { step: RunStep; point: ResumePoint | undefined }[] = [];
  const settled: RunOutcome[] = [];
  const recorder = {
    leaseLost: options.leaseLost ?? false,
    async recordRequiredStep(step: RunStep, point?: ResumePoint) {
      if (options.fail) throw new Error('the database is away');
      required.push({ step, point });
    },
    async settle(outcome: RunOutcome) {
      settled.push(outcome);
      return true;
    },
  } as unknown as RunRecorder<RunRow>;
  return { recorder, required, settled };
}

describe('a decision on a waiting run', () => {
  let f: HostFixture;
  beforeAll(async () => {
    f = await openHostFixture();
  });
  afterAll(() => f.dispose());

  describe('decisionOf', () => {
    it('should make an approval the APPROVAL step and the turn’s calls to run as approved, none done or started', () => {
      const { step, point } = decisionOf(SUSPENDED, { approver: APPROVER, approved: true, turnDigest: 'digest-1', decidedAt: DECIDED_AT });
      expect(step).toEqual({ kind: 'APPROVAL', round: 2, approverId: 'approver-id', approverName: 'approver', approved: true, digest: 'digest-1', decidedAt: DECIDED_AT });
      expect(point).toEqual({ at: 'tools', round: 2, state: STATE, calls: SUSPENSION.calls, mode: 'approved', done: [], started: [] });
    });

    it('should make a denial refuse the turn’s calls and count one more denied turn', () => {
      const denied = decisionOf(SUSPENDED, { approver: APPROVER, approved: false, turnDigest: 'digest-1', decidedAt: DECIDED_AT });
      expect(denied.step.approved).toBe(false);
      expect(denied.point).toMatchObject({ mode: 'denied', state: { ...STATE, deniedTurns: 1 } });
      const again = { ...SUSPENDED, suspension: { ...SUSPENSION, state: { ...STATE, deniedTurns: 2 } } };
      expect(decisionOf(again, { approver: APPROVER, approved: false, turnDigest: 'digest-1', decidedAt: DECIDED_AT }).point.state.deniedTurns).toBe(3);
    });
  });

  describe('storeDecision', () => {
    const decision = decisionOf(SUSPENDED, { approver: APPROVER, approved: true, turnDigest: 'digest-1', decidedAt: DECIDED_AT });
    const pass = async (run: RunRow, resumeRuns = true) => ({
      resumeRuns,
      telemetry: observeRun(undefined, { runId: run.id, configurationId: '', userId: null, level: 'FULL' }),
      logger: f.services.logger,
      run,
    });

    it('should store the APPROVAL step with the turn’s resume point when runs are durable, and let the turn run', async () => {
      const run = await leasedRun(f.db);
      const durable = fakeRecorder();
      expect(await storeDecision(durable.recorder, decision, await pass(run))).toBe(true);
      expect(durable.required).toEqual([{ step: decision.step, point: decision.point }]);
      const plain = fakeRecorder();
      expect(await storeDecision(plain.recorder, decision, await pass(run, false))).toBe(true);
      expect(plain.required).toEqual([{ step: decision.step, point: undefined }]);
      expect([...durable.settled, ...plain.settled]).toEqual([]);
    });

    it('should fail the run, with the usage so far, when the decision cannot be stored: nothing of the turn runs', async () => {
      const run = await leasedRun(f.db);
      const failing = fakeRecorder({ fail: true });
      expect(await storeDecision(failing.recorder, decision, await pass(run))).toBe(false);
      expect(failing.settled).toEqual([
        expect.objectContaining({
          status: 'FAILED',
          errorMessage: 'The approval decision could not be stored, so the approved calls did not run.',
          iterations: 2,
          usage: STATE.usage,
        }),
      ]);
    });

    it('should stop without settling when the lease was lost meanwhile (the run is another process’s)', async () => {
      const run = await leasedRun(f.db);
      const lost = fakeRecorder({ fail: true, leaseLost: true });
      expect(await storeDecision(lost.recorder, decision, await pass(run))).toBe(false);
      expect(lost.settled).toEqual([]);
    });
  });

  describe('decideRun', () => {
    let configurationId: string;
    let owner: Actor;
    beforeAll(async () => {
      ({ configurationId, actor: owner } = await seedScripted(f));
    });

    /** A run of `owner` parked on SUSPENSION after two stored steps. */
    async function waitingRun(): Promise<RunRow> {
      const run = await leasedRun(f.db, { owner: 'instance-a', userId: owner.id, configurationId });
      for (const sequence of [1, 2]) {
        await f.db.insertInto('run_steps').values({ run_id: run.id, sequence, kind: 'LLM', round: 1, duration_ms: null, payload: JSON.stringify({ sequence }), epoch: 1 }).execute();
      }
      const parked = await suspendRun(f.db, run.id, { sealedState: sealSuspendedRun(f.services.secrets, run.id, SUSPENDED), digest: 'digest-1', iterations: 2, promptTokens: 30, completionTokens: 7, estimatedCost: 0.5 }, 1);
      return parked!;
    }
    function deps(resumeRuns = true) {
      const drives: Drive[] = [];
      const decide: DecisionDeps = { services: f.services, owner: 'this-instance', leaseMs: 15_000, resumeRuns, drive: (drive) => void drives.push(drive) };
      return { decide, drives };
    }

    it('should claim the run for this process with the decision sealed in its checkpoint, announce it, then drive it from after its stored steps', async () => {
      const run = await waitingRun();
      const { decide, drives } = deps();
      const claimed = await decideRun(decide, owner, run.id, 'digest-1', false);
      expect(claimed).toMatchObject({ id: run.id, status: 'RUNNING', lease_owner: 'this-instance', lease_epoch: 2 });
      const checkpoint = openCheckpoint(f.services.secrets, run.id, (await runOf(f.db, run.id)).checkpoint!);
      expect(checkpoint).toMatchObject({
        point: { at: 'tools', mode: 'denied', round: 2, calls: SUSPENSION.calls, state: { deniedTurns: 1 } },
        settings: SETTINGS,
        allowList: ['update_records'],
        approval: { kind: 'APPROVAL', approved: false, approverId: owner.id, digest: 'digest-1' },
      });
      const decided = f.published.find((event) => event.runId === run.id && event.type === 'decided');
      expect(decided).toMatchObject({ approved: false, digest: 'digest-1', decidedBy: { id: owner.id, name: owner.name }, run: { checkpoint: null } });
      expect(drives).toHaveLength(1);
      expect(drives[0]).toMatchObject({ epoch: 2, afterSequence: 2, progress: { iterations: 2, usage: { promptTokens: 30, completionTokens: 7, cost: 0.5 } }, context: SUSPENDED });
      // Before the turn runs: its APPROVAL step, with the point to resume the turn from.
      const recorder = fakeRecorder();
      expect(await drives[0]!.before!(recorder.recorder)).toBe(true);
      expect(recorder.required).toEqual([{ step: expect.objectContaining({ kind: 'APPROVAL', approved: false }), point: expect.objectContaining({ mode: 'denied' }) }]);
    });

    it('should seal no checkpoint when runs are not durable', async () => {
      const run = await waitingRun();
      const { decide } = deps(false);
      await decideRun(decide, owner, run.id, 'digest-1', true);
      expect(await runOf(f.db, run.id)).toMatchObject({ status: 'RUNNING', checkpoint: null });
    });

    it('should refuse a stale digest and drive nothing', async () => {
      const run = await waitingRun();
      const { decide, drives } = deps();
      await expect(decideRun(decide, owner, run.id, 'another-turn', true)).rejects.toThrow(/does not match/);
      expect(drives).toEqual([]);
      expect((await runOf(f.db, run.id)).status).toBe('WAITING_FOR_APPROVAL');
    });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError, RunLimitError, ValidationError } from '../../../src/errors.ts';
import type { RunStep } from '../../../src/runtime/run.ts';
import { openCheckpoint } from '../../../src/services/run-checkpoints.ts';
import type { Drive } from '../../../src/services/run-host/drive.ts';
import { launchRun, type LaunchDeps } from '../../../src/services/run-host/launch.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openHostFixture, runOf, seedScripted, type HostFixture } from './fixture.ts';

/**
 * launch.ts: a run's start — input checked, the row stored within the per-user cap with this
 * process's lease and the sealed prompt, the bus subscription opened before the loop, the loop
 * handed to the drive, the start announced.
 */
describe('launching a run', () => {
  let f: HostFixture;
  let configurationId: string;
  let actor: Actor;
  beforeAll(async () => {
    f = await openHostFixture();
    ({ configurationId, actor } = await seedScripted(f, { settings: { replies: [{ content: 'the answer' }] }, privacyLevel: 'METADATA' }));
  });
  afterAll(() => f.dispose());

  function deps(options: Partial<Pick<LaunchDeps, 'resumeRuns' | 'maxRunning'>> & { stopping?: boolean } = {}) {
    const drives: Drive[] = [];
    const stopped = new AbortController();
    if (options.stopping) stopped.abort();
    const launch: LaunchDeps = {
      services: f.services,
      owner: 'this-instance',
      leaseMs: 15_000,
      resumeRuns: options.resumeRuns ?? true,
      maxRunning: options.maxRunning ?? 0,
      stopSignal: stopped.signal,
      drive: (drive) => void drives.push(drive),
    };
    return { launch, drives };
  }
  const runsOf = (userId: string) => f.db.selectFrom('runs').select('id').where('user_id', '=', userId).execute();

  it('should store the run RUNNING under this process’s lease, with the prompt sealed to start again from and the filtered copy in the row', async () => {
    const { launch, drives } = deps();
    const { run, events } = await launchRun(launch, actor, { configurationId, prompt: '  what is up?  ' }, false);
    expect(events).toBeNull();
    const row = await runOf(f.db, run.id);
    expect(row).toMatchObject({ status: 'RUNNING', kind: 'AGENT', user_id: actor.id, configuration_id: configurationId, lease_owner: 'this-instance', lease_epoch: 1, prompt: null });
    expect(row.lease_expires_at!.getTime()).toBeGreaterThan(Date.now());
    expect(openCheckpoint(f.services.secrets, run.id, row.checkpoint!)).toEqual({ start: { prompt: 'what is up?' } });
    expect(drives).toHaveLength(1);
    expect(drives[0]).toMatchObject({ run: { id: run.id }, epoch: 1 });
  });

  it('should store no checkpoint when runs are not durable', async () => {
    const { launch } = deps({ resumeRuns: false });
    const { run } = await launchRun(launch, actor, { configurationId, prompt: 'hi' }, false);
    expect((await runOf(f.db, run.id)).checkpoint).toBeNull();
  });

  it('should open the run’s subscription before the loop starts and announce the start without the sealed checkpoint', async () => {
    const { launch } = deps();
    const { run, events } = await launchRun(launch, actor, { configurationId, prompt: 'hi' }, true);
    const first = await events!.next();
    expect(first.value).toMatchObject({ type: 'started', runId: run.id, run: { id: run.id, checkpoint: null } });
    await events!.return!();
  });

  it('should hand the drive a loop that runs the configuration on the prompt, as the actor', async () => {
    const { launch, drives } = deps();
    await launchRun(launch, actor, { configurationId, prompt: 'hi' }, false);
    const steps: RunStep[] = [];
    const outcome = await drives[0]!.loop({ signal: new AbortController().signal, onStep: (step) => void steps.push(step) });
    expect(outcome).toMatchObject({ status: 'COMPLETED', finalContent: 'the answer' });
    expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM']);
  });

  it('should store the tools the run selected, and no selection when it made none', async () => {
    const { launch } = deps();
    const { run } = await launchRun(launch, actor, { configurationId, prompt: 'hi', tools: [] }, false);
    expect((await runOf(f.db, run.id)).tool_selection).toEqual([]);
    const { run: unselected } = await launchRun(launch, actor, { configurationId, prompt: 'hi' }, false);
    expect((await runOf(f.db, unselected.id)).tool_selection).toBeNull();
  });

  it('should refuse invalid input, an unknown configuration and a stopping host before storing anything', async () => {
    const { actor: someone } = await seedScripted(f);
    const { launch, drives } = deps();
    await expect(launchRun(launch, someone, { configurationId, prompt: '   ' }, false)).rejects.toBeInstanceOf(ValidationError);
    await expect(launchRun(launch, someone, { configurationId: randomUUID(), prompt: 'hi' }, false)).rejects.toBeInstanceOf(NotFoundError);
    await expect(launchRun(deps({ stopping: true }).launch, someone, { configurationId, prompt: 'hi' }, false)).rejects.toBeInstanceOf(ForbiddenError);
    expect(await runsOf(someone.id)).toEqual([]);
    expect(drives).toEqual([]);
  });

  it('should refuse a start beyond the user’s RUNNING runs with RunLimitError, storing nothing', async () => {
    const { actor: capped } = await seedScripted(f);
    const { launch, drives } = deps({ maxRunning: 2 });
    await launchRun(launch, capped, { configurationId, prompt: 'one' }, false);
    await launchRun(launch, capped, { configurationId, prompt: 'two' }, false);
    await expect(launchRun(launch, capped, { configurationId, prompt: 'three' }, false)).rejects.toBeInstanceOf(RunLimitError);
    expect(await runsOf(capped.id)).toHaveLength(2);
    expect(drives).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/logger.ts';
import { createDrivenRuns, type DrivenRun, type DrivenRuns } from '../../../src/services/run-host/driven-runs.ts';
import { stopDrivenRuns } from '../../../src/services/run-host/stop.ts';

/** A drive tracked in `driven` that ends (and is forgotten, as a real drive is) when it is handed over, when aborted, or never. */
function fakeDrive(driven: DrivenRuns, runId: string, endsOn: 'handover' | 'abort' | 'never'): DrivenRun & { readonly ended: () => boolean } {
  const controller = new AbortController();
  const handover = new AbortController();
  let ended = false;
  const done = new Promise<void>((resolve) => {
    const end = () => {
      ended = true;
      driven.forget(runId, controller);
      resolve();
    };
    if (endsOn === 'handover') handover.signal.addEventListener('abort', end);
    if (endsOn === 'abort') controller.signal.addEventListener('abort', end);
  });
  const run = { controller, handover, done, userId: null, epoch: 1, ended: () => ended };
  driven.track(runId, run);
  return run;
}

function logger() {
  const warnings: { obj: object; msg: string | undefined }[] = [];
  return { warnings, logger: { warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) } as unknown as Logger };
}

describe('stopping the runs a process drives', () => {
  it('should hand every durable run over and abort none that stopped in time', async () => {
    const driven = createDrivenRuns();
    const runs = [fakeDrive(driven, 'r0', 'handover'), fakeDrive(driven, 'r1', 'handover')];
    const { warnings, logger: log } = logger();
    await stopDrivenRuns(driven, { resumeRuns: true, stopTimeoutMs: 5_000, logger: log });
    expect(runs.map((run) => [run.handover.signal.aborted, run.controller.signal.aborted, run.ended()])).toEqual([
      [true, false, true],
      [true, false, true],
    ]);
    expect(warnings).toEqual([]);
  });

  it('should abort a durable run that did not reach a boundary in time, and name the runs still busy after that', async () => {
    const driven = createDrivenRuns();
    const handsOver = fakeDrive(driven, 'hands-over', 'handover');
    const stopsWhenAborted = fakeDrive(driven, 'aborted', 'abort');
    const stuck = fakeDrive(driven, 'stuck', 'never');
    const { warnings, logger: log } = logger();
    await stopDrivenRuns(driven, { resumeRuns: true, stopTimeoutMs: 50, logger: log });
    expect(handsOver.controller.signal.aborted).toBe(false);
    expect(stopsWhenAborted.controller.signal.aborted).toBe(true);
    expect(stopsWhenAborted.ended()).toBe(true);
    expect(stuck.controller.signal.aborted).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe('runs did not stop in time; another instance continues them when their lease lapses');
    expect(warnings[0]!.obj).toEqual({ runs: ['stuck'], stopTimeoutMs: 50 });
  });

  it('should abort every run at once when runs are not resumed (no handover), and wait for them to settle', async () => {
    const driven = createDrivenRuns();
    const runs = [fakeDrive(driven, 'r0', 'abort'), fakeDrive(driven, 'r1', 'abort')];
    const { warnings, logger: log } = logger();
    await stopDrivenRuns(driven, { resumeRuns: false, stopTimeoutMs: 5_000, logger: log });
    expect(runs.map((run) => [run.handover.signal.aborted, run.controller.signal.aborted, run.ended()])).toEqual([
      [false, true, true],
      [false, true, true],
    ]);
    expect(warnings).toEqual([]);
  });

  it('should say that the sweep settles the runs that did not settle in time when runs are not resumed', async () => {
    const driven = createDrivenRuns();
    fakeDrive(driven, 'stuck', 'never');
    const { warnings, logger: log } = logger();
    await stopDrivenRuns(driven, { resumeRuns: false, stopTimeoutMs: 20, logger: log });
    expect(warnings.map((warning) => warning.msg)).toEqual(['runs did not settle in time; the stale-heartbeat sweep will settle them INTERRUPTED']);
  });

  it('should return at once when nothing is driven', async () => {
    const { warnings, logger: log } = logger();
    await stopDrivenRuns(createDrivenRuns(), { resumeRuns: true, stopTimeoutMs: 60_000, logger: log });
    expect(warnings).toEqual([]);
  });
});

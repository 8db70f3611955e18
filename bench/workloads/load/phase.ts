/**
 * The load itself: the warm-up, then the measured phase, as one uninterrupted stream of runs from
 * the runner; the server's VmRSS every second and the runner's counters at the edges of the measured
 * phase give its throughput, CPU and memory figures.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunRecord } from '../../bin/load-driver.ts';
import type { Driver } from '../../lib/children.ts';
import { cpuMs, peakRssBytes, rssBytes } from '../../lib/proc.ts';
import { progress } from '../../lib/progress.ts';
import { fmt, median } from '../../lib/stats.ts';
import type { LoadOptions } from './options.ts';

export const MB = 1024 * 1024;

/** The server's VmRSS; t: seconds since the start of the measured phase (negative during the warm-up). */
export interface RssSample {
  readonly t: number;
  readonly rssMb: number;
}

export interface LoadPhase {
  /** Every run of the stream, warm-up included. */
  readonly runs: readonly RunRecord[];
  /** Runs started in the measured phase (their times make the percentiles). */
  readonly measured: readonly RunRecord[];
  /** Runs and steps that ended between the first and the last second of the measured phase, per second. */
  readonly runsPerSecond: number;
  readonly stepsPerSecond: number;
  readonly samples: RssSample[];
  /** The server's VmRSS when the clock started, bytes. */
  readonly rssStart: number;
  /** Its VmHWM right after the load, bytes. */
  readonly vmHwm: number | null;
  /** Of one core, from the clock's start through the drain. */
  readonly serverCpuPercent: number | null;
}

/** Runs the load on the runner's connected workers and reads the server (`pid`) every second. */
export async function runLoadPhase(runner: Driver, pid: number, configurationId: string, options: LoadOptions): Promise<LoadPhase> {
  const warmUpMs = options.warmUpSeconds * 1000;
  const durationMs = options.durationSeconds * 1000;
  const endSecond = options.warmUpSeconds + options.durationSeconds;
  let cpuBefore = cpuMs(pid);
  let rssStart = rssBytes(pid) ?? Number.NaN;
  const startedAt = performance.now();
  const load = runner.request<{ wallMs: number; runs: RunRecord[] }>({ type: 'run-load', configurationId, durationMs: warmUpMs + durationMs, runsPerWorker: null });
  let loadDone = false;
  void load.then(
    () => (loadDone = true),
    () => (loadDone = true),
  );
  const samples: RssSample[] = [];
  let measuredStartedAt = warmUpMs === 0 ? startedAt : Number.NaN;
  const atStart = { finished: 0, steps: 0 };
  let atEnd: { finished: number; steps: number } | null = null;
  for (let second = 1; !loadDone; second++) {
    await Promise.race([sleep(startedAt + second * 1000 - performance.now()), load.catch(() => undefined)]);
    if (loadDone) break;
    const elapsed = (performance.now() - startedAt) / 1000;
    const rss = rssBytes(pid);
    const status = await runner.request<{ finished: number; inFlight: number; errors: number; steps: number }>({ type: 'load-status' });
    if (second === options.warmUpSeconds) {
      measuredStartedAt = performance.now();
      cpuBefore = cpuMs(pid);
      rssStart = rss ?? Number.NaN;
      Object.assign(atStart, { finished: status.finished, steps: status.steps });
    }
    if (second === endSecond) atEnd = { finished: status.finished, steps: status.steps };
    const t = elapsed - options.warmUpSeconds;
    if (rss !== null && t <= options.durationSeconds + 0.5) samples.push({ t, rssMb: rss / MB });
    const phase = t <= 0 ? `warm-up ${Math.round(elapsed)}/${options.warmUpSeconds} s` : t > options.durationSeconds ? `${options.durationSeconds}/${options.durationSeconds} s (draining)` : `${Math.round(t)}/${options.durationSeconds} s`;
    progress(`[load] ${phase} · runs ${status.finished} · in flight ${status.inFlight} · steps ${status.steps} · errors ${status.errors} · server RSS ${fmt((rss ?? Number.NaN) / MB)} MB`);
  }
  const loaded = await load;
  const cpuAfter = cpuMs(pid);
  const measuredMs = performance.now() - measuredStartedAt;
  const vmHwm = peakRssBytes(pid);

  const end = atEnd ?? { finished: loaded.runs.length, steps: loaded.runs.reduce((sum, run) => sum + run.steps.length, 0) };
  return {
    runs: loaded.runs,
    measured: loaded.runs.filter((run) => run.startMs >= warmUpMs),
    runsPerSecond: (end.finished - atStart.finished) / options.durationSeconds,
    stepsPerSecond: (end.steps - atStart.steps) / options.durationSeconds,
    samples,
    rssStart,
    vmHwm,
    serverCpuPercent: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) / measuredMs) * 100,
  };
}

/**
 * The RSS windows "bounded" compares: medians of the first and the last `windowSeconds` of the
 * measured phase (10 s, or a third of a shorter load), and the peak since the clock started.
 */
export function rssWindows(phase: LoadPhase, durationSeconds: number) {
  const { samples } = phase;
  const windowSeconds = Math.min(10, durationSeconds / 3);
  const rssFirstWindowMb = median(samples.filter((sample) => sample.t > 0 && sample.t <= windowSeconds + 0.5).map((sample) => sample.rssMb));
  const rssLastWindowMb = median(samples.filter((sample) => sample.t >= durationSeconds - windowSeconds - 0.5).map((sample) => sample.rssMb));
  return {
    windowSeconds,
    rssPeakMb: Math.max(phase.rssStart / MB, ...samples.map((sample) => sample.rssMb)),
    rssFirstWindowMb,
    rssLastWindowMb,
    rssGrowth: rssLastWindowMb / rssFirstWindowMb - 1,
  };
}

import type { Logger } from '../../logger.ts';
import type { DrivenRuns } from './driven-runs.ts';

/** Without durable runs, at most this long is given to the runs that did not hand over in time, once aborted. */
const ABORTED_GRACE_MS = 2_000;

/**
 * Ends every drive of this process for a stop. Durable runs (`resumeRuns`) are a deploy: each run
 * is asked to hand over at its next step boundary (its lease released, so another instance
 * continues it at once) and is given `stopTimeoutMs`; the runs still busy then are aborted and
 * given at most 2 s more, and keep their lease until it lapses. Otherwise every run is aborted
 * (the drive settles it INTERRUPTED) and given `stopTimeoutMs`. Resolves when the drives ended or
 * the time is up (logged).
 */
export async function stopDrivenRuns(driven: DrivenRuns, options: { readonly resumeRuns: boolean; readonly stopTimeoutMs: number; readonly logger: Logger }): Promise<void> {
  const { resumeRuns, stopTimeoutMs, logger } = options;
  if (resumeRuns) {
    for (const { handover } of driven.runs()) handover.abort();
    if (!(await late(driven, stopTimeoutMs))) return;
  }
  for (const { controller } of driven.runs()) controller.abort();
  if (await late(driven, resumeRuns ? Math.min(stopTimeoutMs, ABORTED_GRACE_MS) : stopTimeoutMs)) {
    logger.warn(
      { runs: driven.ids(), stopTimeoutMs },
      resumeRuns ? 'runs did not stop in time; another instance continues them when their lease lapses' : 'runs did not settle in time; the stale-heartbeat sweep will settle them INTERRUPTED',
    );
  }
}

/** Waits for the drives of now to end, at most `ms`; true when the time ran out first. */
async function late(driven: DrivenRuns, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  return (await Promise.race([Promise.all(driven.runs().map((run) => run.done)), deadline]).finally(() => clearTimeout(timer))) === 'late';
}

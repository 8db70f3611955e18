/**
 * What the load scenario is asked for, and whether this machine can give it: checked before any
 * process starts.
 */
import { readFileSync } from 'node:fs';

export interface LoadOptions {
  /** Runs in flight: one worker (and one graphql-ws connection) each. */
  readonly concurrency: number;
  /** Idle runEvents subscriptions, one graphql-ws connection each. */
  readonly subscriptions: number;
  readonly durationSeconds: number;
  /**
   * Load at the same concurrency before the clock starts, in the same uninterrupted stream of runs:
   * the server's RSS grows for tens of seconds under this load (V8 sizes its heap to the allocation
   * rate) and then stays flat, and "bounded" compares windows of the steady phase, not the ramp.
   */
  readonly warmUpSeconds: number;
  /** Latency of every call to the fake provider, ms. */
  readonly latencyMs: number;
  /** Tool rounds per run (K): 2 (K + 1) + K stored steps. */
  readonly k: number;
}

/** Subscriptions per waiting run. */
export const WATCHERS_PER_RUN = 100;
/** The waiting runs' provider call (the load must end well before it answers). */
export const WAITING_LATENCY_MS = 590_000;

/** The open-file limit this process (and so every child it starts) runs under. */
function openFileLimit(): number | null {
  try {
    const match = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? (match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1])) : null;
  } catch {
    return null;
  }
}

/** Throws, saying what to change, when the lengths are out of range or the open-file limit is too low. */
export function checkLoadOptions(options: LoadOptions): void {
  if (!(Number.isInteger(options.durationSeconds) && options.durationSeconds >= 3 && Number.isInteger(options.warmUpSeconds) && options.warmUpSeconds >= 0)) {
    throw new Error(`the load lasts a whole number of seconds (≥ 3) after a whole number of warm-up seconds: got ${options.durationSeconds} and ${options.warmUpSeconds}`);
  }
  if ((options.durationSeconds + options.warmUpSeconds) * 1000 > WAITING_LATENCY_MS - 120_000) {
    throw new Error(`warm-up + load must stay below ${(WAITING_LATENCY_MS - 120_000) / 1000} s (the idle runs wait ${WAITING_LATENCY_MS / 1000} s)`);
  }
  // Each socket is a descriptor on both sides: the server holds S + C + 1 client sockets, C provider
  // sockets, its database pool and its modules; the watcher S. Ask for a margin on top.
  const descriptors = options.subscriptions + 2 * options.concurrency + 200;
  const limit = openFileLimit();
  if (limit !== null && limit < descriptors) {
    throw new Error(`the open-file limit is ${limit}, the load needs about ${descriptors} descriptors per process: raise it (ulimit -n ${Math.max(4096, descriptors * 2)}) and run again`);
  }
}

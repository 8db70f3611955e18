/**
 * Stopping a process group: every child the harness starts leads one (spawned `detached`), so that
 * what it starts in turn (initdb's child, the `node` a wrapper runs) is stopped with it. Used by the
 * harness (`children.ts`) and, after the harness is gone, by the janitor (`bin/janitor.ts`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { groupMembers } from './proc.ts';

/** How long a group has after SIGTERM before SIGKILL, and after SIGKILL before it is reported as left. */
export const STOP_GRACE_MS = 10_000;
const KILL_WAIT_MS = 5_000;

/** Sends `signal` to every process of group `pgid`; false when none was left to receive it. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** True once no process of group `pgid` runs; false if some still do after `withinMs`. */
export async function groupEnded(pgid: number, withinMs: number): Promise<boolean> {
  for (const deadline = Date.now() + withinMs; groupMembers(pgid).length > 0; ) {
    if (Date.now() > deadline) return false;
    await delay(50);
  }
  return true;
}

/**
 * SIGTERM to the group, SIGKILL to what is left of it after `graceMs`. True when the whole group
 * ended; false only for processes that outlive SIGKILL (stuck in the kernel).
 */
export async function stopGroup(pgid: number, graceMs = STOP_GRACE_MS): Promise<boolean> {
  if (!signalGroup(pgid, 'SIGTERM')) return true;
  if (await groupEnded(pgid, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return groupEnded(pgid, KILL_WAIT_MS);
}

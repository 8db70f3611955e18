import type { Db, RunRow } from '../../db/database.ts';
import { findRunsEndedBefore } from '../../db/repositories/runs.ts';
import type { RunEventBus } from '../../runtime/events.ts';

/** How long after a run settled its own `finished` event may still be on its way (default). */
export const LOST_END_GRACE_MS = 5_000;
/** Runs read per statement. */
const CHUNK = 500;

/** Per bus: how many live lists of this process show each run open (ListedRuns). */
const listedByBus = new WeakMap<object, Map<string, number>>();

/**
 * The open runs one live list (runUpdates, approvalRequests) shows: a Map that holds each of its
 * runs in the process's listed runs while it is in it, so that the sweep looks at them too (a list
 * subscribes to every run, so `bus.watchedRuns` does not name them). `clear()` when the list ends.
 */
export class ListedRuns<Value> extends Map<string, Value> {
  readonly #counts: Map<string, number>;
  constructor(bus: object) {
    super();
    let counts = listedByBus.get(bus);
    if (!counts) listedByBus.set(bus, (counts = new Map()));
    this.#counts = counts;
  }
  override set(runId: string, value: Value): this {
    if (!this.has(runId)) this.#counts.set(runId, (this.#counts.get(runId) ?? 0) + 1);
    return super.set(runId, value);
  }
  override delete(runId: string): boolean {
    if (!super.delete(runId)) return false;
    const count = this.#counts.get(runId) ?? 0;
    if (count <= 1) this.#counts.delete(runId);
    else this.#counts.set(runId, count - 1);
    return true;
  }
  override clear(): void {
    for (const runId of [...this.keys()]) this.delete(runId);
  }
}

/**
 * Ends the watchers of runs whose end never reached them. A run's end is stored, then published: a
 * process that dies between the two (SIGKILL, a lost host) leaves the run settled in storage, with
 * nobody to take it over, and its watchers here waiting for an event nobody will publish (the chaos
 * suite caught two such watchers on the surviving instance). Each sweep of the lease keeper looks at
 * the runs watched in this process, and those its live lists show open: one settled more than
 * `graceMs` ago, when its own event had all the time it needs, gets its end delivered here from
 * storage, with the final content as stored. A watcher's stream reads the steps it missed before
 * that end, as for any end; a list shows the run's final state. Returns how many ends it delivered.
 */
export async function deliverLostEnds(deps: { readonly db: Db; readonly bus: RunEventBus<RunRow> }, graceMs = LOST_END_GRACE_MS): Promise<number> {
  const watched = [...new Set([...deps.bus.watchedRuns(), ...(listedByBus.get(deps.bus)?.keys() ?? [])])];
  const settledBefore = new Date(Date.now() - graceMs);
  let delivered = 0;
  // Nearly always nothing: the statement returns only the ends that were lost, never a running run's row.
  for (let at = 0; at < watched.length; at += CHUNK) {
    for (const run of await findRunsEndedBefore(deps.db, watched.slice(at, at + CHUNK), settledBefore)) {
      deps.bus.deliver({ type: 'finished', runId: run.id, finalContent: run.final_content, run, publishedAt: Date.now() });
      delivered++;
    }
  }
  return delivered;
}

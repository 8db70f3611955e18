/** One run this process drives: how to stop it, when its drive ends, who it runs as, its lease. */
export interface DrivenRun {
  /** Aborted to stop the run at its next step boundary (its client left, a cancellation, a lost lease, a stop). */
  readonly controller: AbortController;
  /** Aborted by a graceful stop: the run stops at its next step boundary and is handed over. */
  readonly handover: AbortController;
  /** Settles when the drive is over (parked, settled, handed over, or given up); never rejects. */
  readonly done: Promise<void>;
  readonly userId: string | null;
  /** The lease epoch this process drives the run under. */
  readonly epoch: number;
}

/** A lease this process holds, with the drive that holds it (a run may be driven again under a newer one). */
export interface DrivenLease {
  readonly runId: string;
  readonly epoch: number;
  readonly controller: AbortController;
}

/**
 * The runs this process drives, by run id: what cancellations, the lease keeper and a stop act on.
 * A run is driven here at most once at a time; a run parked and resumed is tracked again under the
 * same id, so an ending drive forgets only its own entry.
 */
export interface DrivenRuns {
  track(runId: string, run: DrivenRun): void;
  /** Forgets the run if `controller` is still its entry's; a newer drive of the same run stays. */
  forget(runId: string, controller: AbortController): void;
  get(runId: string): DrivenRun | undefined;
  /** Stops the run at its next step boundary; false when this process does not drive it. */
  abort(runId: string): boolean;
  /** Stops every run driven here as `userId`. */
  abortRunsOf(userId: string): void;
  /** The leases held now, for a renewal. */
  leases(): DrivenLease[];
  /** Whether `lease` is still held by the drive that held it when it was listed. */
  holds(lease: DrivenLease): boolean;
  ids(): string[];
  runs(): DrivenRun[];
}

export function createDrivenRuns(): DrivenRuns {
  const active = new Map<string, DrivenRun>();
  return {
    track: (runId, run) => void active.set(runId, run),
    forget(runId, controller) {
      if (active.get(runId)?.controller === controller) active.delete(runId);
    },
    get: (runId) => active.get(runId),
    abort(runId) {
      const run = active.get(runId);
      run?.controller.abort();
      return run !== undefined;
    },
    abortRunsOf(userId) {
      for (const run of active.values()) if (run.userId === userId) run.controller.abort();
    },
    leases: () => [...active].map(([runId, run]) => ({ runId, epoch: run.epoch, controller: run.controller })),
    holds: (lease) => active.get(lease.runId)?.controller === lease.controller,
    ids: () => [...active.keys()],
    runs: () => [...active.values()],
  };
}

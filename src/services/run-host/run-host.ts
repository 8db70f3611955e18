import { randomUUID } from 'node:crypto';
import type { RunRow } from '../../db/database.ts';
import { createRunRepository } from '../../db/run-repository.ts';
import { settleStaleRuns } from '../../db/repositories/run-settlement.ts';
import * as runs from '../../db/repositories/runs.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { countSettledRun } from '../../observability/run-telemetry.ts';
import type { Broadcast } from '../../runtime/broadcast.ts';
import type { RunBusEvent, RunEventBus } from '../../runtime/events.ts';
import type { StoredStep } from '../../runtime/stored-step.ts';
import type { Actor } from '../../tools/tool.ts';
import { openSuspendedRun } from '../approvals.ts';
import type { RunExecutionDeps, SuspendedRun } from '../run-execution.ts';
import { cancelRun, cancelRunsOf, listenForCancellations, type RunCancellation } from './cancellation.ts';
import { decideRun } from './decisions.ts';
import { driveRun, type Drive } from './drive.ts';
import { createDrivenRuns } from './driven-runs.ts';
import { launchRun } from './launch.ts';
import { leaseTimings, startLeaseKeeper } from './lease-keeper.ts';
import { deliverLostEnds } from './lost-ends.ts';
import { stopDrivenRuns } from './stop.ts';
import { claimOrphans } from './takeover.ts';

/**
 * What the run host uses: what running a loop reads, the bus its runs publish on, and the
 * broadcast that carries cancellations to the instance driving a run.
 */
export interface RunHostDeps extends RunExecutionDeps {
  readonly bus: RunEventBus<RunRow>;
  readonly cancellations: Broadcast<RunCancellation>;
  /** Prometheus metrics of runs (absent in tools that run no server). */
  readonly metrics?: Metrics;
}

export interface RunHostOptions {
  /** How often a process renews its leases (default 10 s, and at most a third of the lease). */
  readonly heartbeatMs?: number;
  /**
   * How long `stop` waits for its runs to reach a step boundary (default 8 s); then their calls
   * are aborted. A run still busy after that keeps its lease until it lapses.
   */
  readonly stopTimeoutMs?: number;
  /**
   * RUNNING runs one user may have at once (default 8; 0 = no limit). A start beyond it is refused
   * with RunLimitError before anything is stored. Runs WAITING_FOR_APPROVAL do not count: they hold
   * no provider call, no loop and no connection while they wait; an approved run resumes even when
   * its user is at the limit (the human decision is not refused after the fact).
   */
  readonly maxRunningRunsPerUser?: number;
  /** A RUNNING run's lease (AIRLOCK_RUN_LEASE_MS, default 15 s): when it lapses, any instance continues the run. */
  readonly leaseMs?: number;
  /** AIRLOCK_RESUME_RUNS (default true): false settles a run whose process is gone INTERRUPTED, as before durable runs. */
  readonly resumeRuns?: boolean;
  /** This process as a lease owner (default a random UUID). */
  readonly instanceId?: string;
  /**
   * An embedded database, which one process at a time opens: at start, every RUNNING run owned by
   * another process is orphaned (its process is gone) and is continued at once.
   */
  readonly claimOrphansAtStart?: boolean;
  /** How often to look for runs whose lease lapsed (default 1 s, at most the heartbeat). */
  readonly claimEveryMs?: number;
}

export interface StartedRun {
  readonly run: RunRow;
  /** Bus events of this run, subscribed BEFORE the loop started, so nothing is missed. */
  readonly events: AsyncIterableIterator<RunBusEvent<RunRow>>;
  /** Cancels the run at its next step boundary (a client that completes or disconnects). */
  cancel(): void;
}

export interface RunHost {
  /**
   * Starts a run tied to its caller (runAgent): `events` is subscribed before the loop starts, and
   * the caller cancels the run when its client leaves.
   */
  start(actor: Actor, input: unknown): Promise<StartedRun>;
  /**
   * Starts the same run detached from any connection (startRun): it runs to its end with no reader,
   * opens no bus subscription (nothing buffers events nobody reads), and is stopped only by
   * `cancel`, `cancelRunsOf` or `stop`. Counts against the per-user cap like any run.
   */
  startDetached(actor: Actor, input: unknown): Promise<RunRow>;
  /**
   * Owner or admin. A run driven by this process stops at its next step boundary; a run waiting for
   * approval is settled CANCELLED now; a run driven by another instance is asked to stop (a durable
   * request its instance reads at its next heartbeat, and a broadcast that reaches it at once).
   */
  cancel(actor: Actor, runId: string): Promise<RunRow>;
  /** Approves or denies the turn a run waits on; resumes it in the background. */
  decide(actor: Actor, runId: string, turnDigest: string, approved: boolean): Promise<RunRow>;
  /** The sealed state of a waiting run, opened (for the approver's view). */
  suspendedState(run: RunRow): SuspendedRun | null;
  /** Stored steps after `afterSequence`, as the persisted (filtered) copy. */
  replay(runId: string, afterSequence: number): Promise<{ sequence: number; step: StoredStep }[]>;
  subscribe(runId: string): AsyncIterableIterator<RunBusEvent<RunRow>>;
  /**
   * Cancels every run of a user: those this process drives end CANCELLED at their next step
   * boundary, those waiting for approval are settled CANCELLED now. For a user who lost access.
   */
  cancelRunsOf(userId: string): Promise<void>;
  /**
   * Agent runs whose process is gone: claims and continues them (up to 16 at a time), or, with
   * `resumeRuns: false`, settles them INTERRUPTED. Returns how many runs it took over or settled.
   */
  settleStale(): Promise<number>;
  /**
   * Stops: every run driven here is handed over at its next step boundary (its lease released, so
   * another instance continues it at once), or, with `resumeRuns: false`, interrupted and settled.
   */
  stop(): Promise<void>;
}

/**
 * The run host: drives agent runs in the background of the subscriptions (and mutations) that ask
 * for them, from their start to their end, under a lease in the database. Its parts, one job each:
 * `launch.ts` (cap + insert with the lease and the sealed start), `drive.ts` (recorder, loop,
 * checkpoints; park, settle or hand over), `decisions.ts` (a decision claimed and stored before its
 * turn runs), `takeover.ts` (the runs of processes that are gone), `lease-keeper.ts` (the
 * heartbeat and the claim timer), `cancellation.ts` (by client, by `cancelRun` on any instance, by
 * revocation), `stop.ts` (the handover of a graceful stop); `driven-runs.ts` is what they share.
 */
export function createRunHost(services: RunHostDeps, options: RunHostOptions = {}): RunHost {
  const { db, logger, bus } = services;
  const leaseMs = options.leaseMs ?? 15_000;
  const timings = leaseTimings({ ...options, leaseMs });
  const stopTimeoutMs = options.stopTimeoutMs ?? 8_000;
  const maxRunning = options.maxRunningRunsPerUser ?? 8;
  const resumeRuns = options.resumeRuns ?? true;
  const owner = options.instanceId ?? randomUUID();
  const driven = createDrivenRuns();
  /** Aborted by `stop`: no run starts or is claimed any more, and recorders stop retrying to store a run's end (the sweep settles it). */
  const stopped = new AbortController();
  const stopSignal = stopped.signal;

  const repository = createRunRepository(db, services.writer);
  const drive = (how: Drive) => driveRun({ db, secrets: services.secrets, bus, repository, driven, resumeRuns, stopSignal }, how);
  /** What starting, deciding and taking over share: this process's lease, and where a run is driven. */
  const parts = { services, owner, leaseMs, resumeRuns, stopSignal, drive };
  const launching = { ...parts, maxRunning };
  const cancelling = { db, bus, cancellations: services.cancellations, metrics: services.metrics, driven };

  const host: RunHost = {
    async start(actor, rawInput) {
      const { run, events } = await launchRun(launching, actor, rawInput, true);
      return { run, events: events!, cancel: () => void driven.abort(run.id) };
    },

    async startDetached(actor, rawInput) {
      return (await launchRun(launching, actor, rawInput, false)).run;
    },

    decide: (actor, runId, turnDigest, approved) => decideRun(parts, actor, runId, turnDigest, approved),

    suspendedState: (run) => openSuspendedRun(services, run),

    cancel: (actor, runId) => cancelRun(cancelling, actor, runId),

    cancelRunsOf: (userId) => cancelRunsOf(cancelling, userId),

    async replay(runId, afterSequence) {
      const rows = await runs.listRunSteps(db, runId, afterSequence, 100_000);
      return rows.map((row) => ({ sequence: row.sequence, step: row.payload as unknown as StoredStep }));
    },

    subscribe: (runId) => bus.subscribe(runId),

    async settleStale() {
      const settled = resumeRuns ? [] : await settleStaleRuns(db, leaseMs);
      if (settled.length > 0) logger.warn({ runs: settled.map((run) => run.id) }, 'settled runs whose process stopped as INTERRUPTED');
      // Their watchers and the live lists learn it like any other end of a run.
      for (const run of settled) bus.publish({ type: 'finished', runId: run.id, finalContent: null, run });
      for (const run of settled) countSettledRun(services.metrics, run);
      const claimed = await claimOrphans(parts);
      // Watchers here of a run whose process stored its end and died before publishing it.
      await deliverLostEnds({ db, bus });
      return settled.length + claimed;
    },

    async stop() {
      keeper.stop();
      stopListening();
      stopped.abort();
      await stopDrivenRuns(driven, { resumeRuns, stopTimeoutMs, logger });
    },
  };

  const stopListening = listenForCancellations(cancelling);
  // Renew this process's leases (and stop the runs cancelled elsewhere or taken over after a pause); continue (or settle) the runs whose process is gone.
  const keeper = startLeaseKeeper({ db, logger, owner, leaseMs, ...timings, driven, lookForOrphans: () => host.settleStale() });
  if (options.claimOrphansAtStart) void claimOrphans(parts, true).catch((error: unknown) => logger.warn({ err: error }, 'continuing the runs of the previous process failed'));
  return host;
}

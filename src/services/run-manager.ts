import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RunRow } from '../db/database.ts';
import { createRunRepository } from '../db/run-repository.ts';
import { loadRunSetup } from '../db/repositories/run-setup.ts';
import * as leases from '../db/repositories/run-leases.ts';
import * as runs from '../db/repositories/runs.ts';
import { findUserById } from '../db/repositories/users.ts';
import { ForbiddenError, NotFoundError, RunLimitError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { countSettledRun, observeRun, type RunTelemetry } from '../observability/run-telemetry.ts';
import type { Broadcast } from '../runtime/broadcast.ts';
import type { ResumeReason, RunBusEvent, RunEventBus, RunProgress } from '../runtime/events.ts';
import { LoopHandedOver } from '../runtime/loop.ts';
import type { ResumePoint } from '../runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../runtime/run.ts';
import { filterRunContent, type PrivacyLevel, type StoredStep } from '../runtime/privacy.ts';
import { createRunRecorder, type RunRecorder } from '../runtime/run-recorder.ts';
import type { Actor } from '../tools/tool.ts';
import { claimDecision, openSuspendedRun, sealSuspendedRun, visibleRun } from './approvals.ts';
import { openCheckpoint, sealCheckpoint, type RunCheckpoint } from './run-checkpoints.ts';
import { continueRun, executeRun, resumeRun, type RunExecutionDeps, type RunRequest, type SuspendedRun } from './run-execution.ts';
import { toActor } from './users.ts';
import { runSelectionOf } from './tool-access.ts';
import { parseInput } from './validate.ts';

/** A run to stop, asked for on one instance, for the instance that drives it. */
export interface RunCancellation {
  readonly runId: string;
}

export const runCancellationSchema: z.ZodType<RunCancellation> = z.object({ runId: z.uuid() });

/**
 * Whether the database bears out a cancellation that came from another instance: its run's row says
 * a cancel was requested (`cancelRun` stores that before publishing). Anything else — a message
 * forged on Redis, or one for a run that does not exist — is not acted on.
 */
export async function confirmCancellation(db: RunManagerDeps['db'], { runId }: RunCancellation): Promise<boolean> {
  const [run] = await runs.findRunsByIds(db, [runId]);
  return run !== undefined && run.cancel_requested_at !== null;
}

/**
 * What the run manager uses: what running a loop reads, the bus its runs publish on, and the
 * broadcast that carries cancellations to the instance driving a run.
 */
export interface RunManagerDeps extends RunExecutionDeps {
  readonly bus: RunEventBus<RunRow>;
  readonly cancellations: Broadcast<RunCancellation>;
  /** Prometheus metrics of runs (absent in tools that run no server). */
  readonly metrics?: Metrics;
}

export interface RunManagerOptions {
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

export interface RunManager {
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

const runInputSchema = z.object({
  configurationId: z.string(),
  prompt: z.string().trim().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters'),
  tools: z
    .array(z.string().max(64, 'must be at most 64 characters'))
    .max(200, 'must list at most 200 tools')
    .nullish(),
  toolGroups: z
    .array(z.string().max(100, 'must be at most 100 characters'))
    .max(50, 'must list at most 50 groups')
    .nullish(),
});

const FAILED_UNEXPECTEDLY = 'The run failed unexpectedly; see the server log.';
const CHECKPOINT_UNREADABLE = 'The server running this run stopped, and its checkpoint could not be opened (was AIRLOCK_MASTER_KEY changed?).';
/** Runs one look for orphans claims at most: a backlog is taken over over several looks, by every instance. */
const CLAIM_BATCH = 16;

function failure(errorMessage: string, base?: RunOutcome): RunOutcome {
  return {
    status: 'FAILED',
    terminationReason: 'PROVIDER_FAILED',
    truncated: false,
    iterations: base?.iterations ?? 0,
    finalContent: null,
    usage: base?.usage ?? { promptTokens: 0, completionTokens: 0, cost: 0 },
    errorMessage,
  };
}

/** A row as it travels on the bus: the sealed checkpoint stays in the database. */
const withoutCheckpoint = (run: RunRow): RunRow => (run.checkpoint === null ? run : { ...run, checkpoint: null });

/** The part of a run request every way of driving a run shares. */
type DrivenRequest = Pick<RunRequest, 'signal' | 'onStep' | 'observer' | 'spanContent' | 'checkpoint' | 'handover' | 'onPrepared'>;

/** One way of driving a run here: a start, a resume after a decision, a takeover. */
interface Drive {
  readonly run: RunRow;
  /** The lease epoch this process drives the run under. */
  readonly epoch: number;
  readonly telemetry: RunTelemetry;
  readonly logger: Logger;
  /** The last step already stored, and the totals before the first step recorded here. */
  readonly afterSequence?: number;
  readonly progress?: RunProgress;
  /** The options and allow-list, when known before the loop (a resume); else learnt from it. */
  readonly context?: Omit<SuspendedRun, 'suspension'>;
  /** Runs before the loop with the recorder (an approval decision stored first); false = nothing more runs. */
  before?(recorder: RunRecorder<RunRow>): Promise<boolean>;
  loop(request: DrivenRequest): Promise<RunOutcome>;
}

/**
 * Drives runs in the background of the subscriptions that asked for them: creates the run row,
 * feeds each step to the recorder, parks runs that wait for approval (state sealed at rest),
 * resumes them on a verified decision, settles exactly once, holds each run's lease (renewed by the
 * heartbeat), continues the runs of processes that are gone from their sealed checkpoints, and lets
 * a run be cancelled by its client, by `cancelRun`, or handed over by a graceful stop.
 */
export function createRunManager(services: RunManagerDeps, options: RunManagerOptions = {}): RunManager {
  const { db, logger, secrets, bus, writer } = services;
  const leaseMs = options.leaseMs ?? 15_000;
  const heartbeatMs = Math.min(options.heartbeatMs ?? 10_000, Math.max(Math.floor(leaseMs / 3), 10));
  const claimEveryMs = options.claimEveryMs ?? Math.min(heartbeatMs, 1_000);
  const stopTimeoutMs = options.stopTimeoutMs ?? 8_000;
  const maxRunning = options.maxRunningRunsPerUser ?? 8;
  const resumeRuns = options.resumeRuns ?? true;
  const owner = options.instanceId ?? randomUUID();
  /** Runs this process drives, by run id, with the user they run as and the epoch of their lease. */
  const active = new Map<string, { controller: AbortController; handover: AbortController; done: Promise<void>; userId: string | null; epoch: number }>();
  const abortDriven = (runId: string) => active.get(runId)?.controller.abort();
  let stopping = false;
  /** Aborted by `stop`: recorders then stop retrying to store a run's end (the sweep settles it). */
  const stopped = new AbortController();

  const repository = createRunRepository(db, writer);

  /** After the loop returns: park the run (sealed state) or settle it; both publish their event. */
  async function conclude(
    run: RunRow,
    epoch: number,
    recorder: RunRecorder<RunRow>,
    outcome: RunOutcome | 'handed over',
    runLogger: Logger,
    context: Omit<SuspendedRun, 'suspension'> | null,
    telemetry: RunTelemetry,
  ): Promise<void> {
    const settle = async (end: RunOutcome) => {
      if (await recorder.settle(end)) telemetry.settled(end, run.created_at);
    };
    // Every step is stored before the run is parked (a resume continues after the last one) or settled.
    await recorder.flushed();
    if (recorder.leaseLost) return; // another process continues it: nothing more is written here
    if (outcome === 'handed over' || (stopping && resumeRuns && outcome.status === 'CANCELLED')) {
      // Stopping: the run goes on elsewhere from its last checkpoint, at once.
      await leases.releaseLease(db, { runId: run.id, epoch }).catch((error: unknown) => runLogger.warn({ err: error }, 'could not release the lease; the run is continued when it lapses'));
      return;
    }
    if (stopping && outcome.status === 'CANCELLED') {
      outcome = { ...outcome, status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage: 'The server stopped before the run finished.' };
    }
    if (outcome.status === 'WAITING_FOR_APPROVAL' && outcome.suspension) {
      try {
        if (!context) throw new Error('no run context to store with the suspension');
        const stored: SuspendedRun = { ...context, suspension: outcome.suspension };
        const parked = await runs.suspendRun(
          db,
          run.id,
          {
            sealedState: sealSuspendedRun(secrets, run.id, stored),
            digest: outcome.suspension.digest,
            iterations: outcome.iterations,
            promptTokens: outcome.usage.promptTokens,
            completionTokens: outcome.usage.completionTokens,
            estimatedCost: outcome.usage.cost,
          },
          epoch,
        );
        if (!parked) throw new Error('the run was no longer RUNNING under this lease');
        recorder.announceSuspension(outcome.suspension, parked);
        telemetry.parked(outcome, outcome.suspension.digest);
        return;
      } catch (error) {
        // A state that cannot be stored must not promise a resume.
        runLogger.error({ err: error }, 'could not store the suspended state; failing the run');
        await settle(failure('The run needed an approval but its state could not be stored.', outcome));
        return;
      }
    }
    await settle(outcome);
  }

  /** Drives a run here: its recorder, its loop (with checkpoints when runs are durable), its end. */
  function drive(drive: Drive): void {
    const { run, epoch, telemetry, logger: runLogger } = drive;
    const controller = new AbortController();
    const handover = new AbortController();
    let context: Omit<SuspendedRun, 'suspension'> | null = drive.context ?? null;
    const seal = (point: ResumePoint) => sealCheckpoint(secrets, run.id, { point, settings: context!.settings, allowList: context!.allowList });
    const recorder = createRunRecorder({
      runId: run.id,
      level: run.privacy_level,
      repository,
      bus,
      logger: runLogger,
      stopSignal: stopped.signal,
      stateVersion: run.state_version,
      ...(drive.afterSequence === undefined ? {} : { afterSequence: drive.afterSequence }),
      ...(drive.progress ? { progress: drive.progress } : {}),
      lease: { epoch, seal, onLost: () => controller.abort() },
    });
    const body = async () => {
      if (drive.before && !(await drive.before(recorder))) return;
      let outcome: RunOutcome | 'handed over';
      try {
        outcome = await telemetry.within(() =>
          drive.loop({
            signal: controller.signal,
            handover: handover.signal,
            onStep: (step: RunStep, resumeFrom?: ResumePoint) => (telemetry.step(step), recorder.recordStep(step, resumeFrom)),
            ...(resumeRuns
              ? {
                  checkpoint: async (point: ResumePoint) => {
                    await recorder.flushed();
                    if (!(await leases.storeCheckpoint(db, { runId: run.id, epoch }, seal(point)))) {
                      controller.abort();
                      throw new LoopHandedOver();
                    }
                  },
                }
              : {}),
            onPrepared: (prepared) => (context ??= prepared),
            observer: telemetry.observer,
            spanContent: telemetry.spanContent,
          }),
        );
      } catch (error) {
        if (error instanceof LoopHandedOver) outcome = 'handed over';
        else {
          runLogger.error({ err: error }, 'run failed unexpectedly');
          outcome = failure(FAILED_UNEXPECTEDLY);
        }
      }
      await conclude(run, epoch, recorder, outcome, runLogger, context, telemetry);
    };
    const done = body()
      .catch((error: unknown) => runLogger.error({ err: error }, 'could not settle the run'))
      // A resumed run is tracked again under the same id: only forget the entry this body owns.
      .finally(() => {
        if (active.get(run.id)?.controller === controller) active.delete(run.id);
      });
    active.set(run.id, { controller, handover, done, userId: run.user_id, epoch });
  }

  /** A run waiting for approval is driven by no process: cancelling it settles it here. */
  async function cancelWaitingRun(run: RunRow): Promise<RunRow | undefined> {
    const settled = await runs.settleRun(db, run.id, {
      status: 'CANCELLED',
      terminationReason: 'CANCELLED',
      truncated: false,
      iterations: run.iterations,
      finalContent: null,
      promptTokens: run.prompt_tokens,
      completionTokens: run.completion_tokens,
      estimatedCost: run.estimated_cost,
      errorMessage: null,
    });
    if (settled) bus.publish({ type: 'finished', runId: run.id, finalContent: null, run: settled });
    if (settled) countSettledRun(services.metrics, settled);
    return settled;
  }

  /**
   * Creates the run row (within the cap, with this process's lease and, for durable runs, the
   * sealed prompt to start again from) and drives the loop in the background. `subscribe` opens
   * the run's bus subscription BEFORE the loop starts (an attached caller misses nothing); a
   * detached run opens none.
   */
  async function launch(
    actor: Actor,
    rawInput: unknown,
    subscribe: boolean,
  ): Promise<{ run: RunRow; events: AsyncIterableIterator<RunBusEvent<RunRow>> | null }> {
    if (stopping) throw new ForbiddenError('The server is shutting down; start the run again in a moment.');
    const input = parseInput(runInputSchema, rawInput);
    // Stored and run EXPANDED (the tools of the ticked groups as registered at start): what ran.
    const selection = runSelectionOf(services.registry, input.tools, input.toolGroups);
    const setup = await loadRunSetup(db, input.configurationId, actor.id);
    if (!setup) throw new NotFoundError('Configuration', input.configurationId);
    const { configuration } = setup;
    const level: PrivacyLevel = configuration.privacy_level;
    const storedContent = filterRunContent(level, { prompt: input.prompt, finalContent: null });
    const runId = randomUUID();
    const telemetry = observeRun(services.metrics, { runId, configurationId: configuration.id, userId: actor.id, level });
    const row = {
      id: runId,
      configuration_id: configuration.id,
      user_id: actor.id,
      status: 'RUNNING',
      prompt: storedContent.prompt,
      privacy_level: level,
      tool_selection: selection ? JSON.stringify(selection) : null,
      trace_parent: telemetry.traceParent,
      lease: { owner, ms: leaseMs, checkpoint: resumeRuns ? sealCheckpoint(secrets, runId, { start: { prompt: input.prompt } }) : null },
    } as const;
    const run = await (maxRunning > 0 ? runs.insertRunWithinCap(db, row, maxRunning) : runs.insertRun(db, row)).catch((error: unknown) => {
      telemetry.refused();
      throw error;
    });
    if (!run) {
      telemetry.refused();
      throw new RunLimitError(maxRunning);
    }
    telemetry.started();
    const events = subscribe ? bus.subscribe(run.id, { drivenHere: true }) : null;
    drive({
      run,
      epoch: run.lease_epoch,
      telemetry,
      logger: logger.child({ runId: run.id }),
      loop: async (request) =>
        (await executeRun(services, { ...request, runId: run.id, configurationId: configuration.id, setup, prompt: input.prompt, actor, selection })).outcome,
    });
    bus.publish({ type: 'started', runId: run.id, run: withoutCheckpoint(run) });
    return { run, events };
  }

  /**
   * Continues a run claimed from a process that is gone: from its sealed checkpoint, as its user,
   * after the steps already stored. A cancellation asked for meanwhile is honoured instead; a
   * checkpoint that cannot be opened settles the run INTERRUPTED.
   */
  async function takeOver(claimed: RunRow, reason: ResumeReason): Promise<void> {
    const lease = { runId: claimed.id, epoch: claimed.lease_epoch };
    const runLogger = logger.child({ runId: claimed.id });
    const end = (row: RunRow | undefined) => {
      if (!row) return;
      bus.publish({ type: 'finished', runId: row.id, finalContent: null, run: row });
      countSettledRun(services.metrics, row);
    };
    let checkpoint: RunCheckpoint;
    try {
      if (claimed.checkpoint === null) throw new Error('the run has no checkpoint');
      checkpoint = openCheckpoint(secrets, claimed.id, claimed.checkpoint);
    } catch (error) {
      runLogger.error({ err: error }, 'could not open the checkpoint of a run taken over; settling it INTERRUPTED');
      end(await leases.settleClaimedAsInterrupted(db, lease, CHECKPOINT_UNREADABLE));
      return;
    }
    const afterSequence = await runs.lastStepSequence(db, claimed.id);
    const userRow = claimed.user_id ? await findUserById(db, claimed.user_id) : undefined;
    const actor = userRow ? toActor(userRow) : null;
    const telemetry = observeRun(services.metrics, {
      runId: claimed.id,
      configurationId: claimed.configuration_id ?? '',
      userId: claimed.user_id,
      level: claimed.privacy_level,
      startedIn: claimed.trace_parent,
    });
    runLogger.warn({ reason, epoch: lease.epoch, fromSequence: afterSequence + 1 }, 'continuing a run whose process is gone');
    bus.publish({ type: 'resumed', runId: claimed.id, fromSequence: afterSequence + 1, reason, run: withoutCheckpoint(claimed) });
    const request = { runId: claimed.id, configurationId: claimed.configuration_id ?? '', actor };
    const state = 'point' in checkpoint ? checkpoint.point.state : null;
    drive({
      run: claimed,
      epoch: lease.epoch,
      telemetry,
      logger: runLogger,
      afterSequence,
      ...(state ? { progress: { iterations: state.iterations, usage: state.usage } } : {}),
      ...('point' in checkpoint ? { context: { settings: checkpoint.settings, allowList: checkpoint.allowList } } : {}),
      before: async (recorder) => {
        if (claimed.cancel_requested_at === null) {
          // A decision claimed by the process that died, its APPROVAL step not stored yet: stored first.
          return 'point' in checkpoint && checkpoint.approval ? storeDecision(recorder, checkpoint.approval, checkpoint.point, telemetry, runLogger, claimed) : true;
        }
        const settled = await runs.settleRun(
          db,
          claimed.id,
          { status: 'CANCELLED', terminationReason: 'CANCELLED', truncated: false, iterations: state?.iterations ?? 0, finalContent: null, promptTokens: state?.usage.promptTokens ?? 0, completionTokens: state?.usage.completionTokens ?? 0, estimatedCost: state?.usage.cost ?? 0, errorMessage: null },
          lease.epoch,
        );
        end(settled);
        return false;
      },
      loop: async (driven) => {
        if ('point' in checkpoint) return continueRun(services, { ...driven, ...request }, { point: checkpoint.point, settings: checkpoint.settings, allowList: checkpoint.allowList });
        const selection = claimed.tool_selection === null ? null : (JSON.parse(String(claimed.tool_selection)) as string[]);
        return (await executeRun(services, { ...driven, ...request, prompt: checkpoint.start.prompt, selection })).outcome;
      },
    });
  }

  /**
   * Stores a decision's APPROVAL step (with the turn's resume point) BEFORE any call of the turn
   * runs; if it cannot be stored, nothing of the turn runs and the run fails. False = stop.
   */
  async function storeDecision(
    recorder: RunRecorder<RunRow>,
    step: RunStep,
    point: ResumePoint,
    telemetry: RunTelemetry,
    runLogger: Logger,
    run: RunRow,
  ): Promise<boolean> {
    try {
      await recorder.recordRequiredStep(step, resumeRuns ? point : undefined);
      return true;
    } catch (error) {
      if (recorder.leaseLost) return false;
      runLogger.error({ err: error }, 'could not store the approval decision; the writes do not run');
      const soFar = { ...failure(''), iterations: point.state.iterations, usage: point.state.usage };
      const end = failure('The approval decision could not be stored, so the approved calls did not run.', soFar);
      if (await recorder.settle(end)) telemetry.settled(end, run.created_at);
      return false;
    }
  }

  /** Looks for runs whose process is gone; continues them (or settles them, when runs are not resumed). */
  async function claimOrphans(everyOtherOwner = false): Promise<number> {
    if (stopping) return 0;
    if (!resumeRuns) return 0;
    const claimed = await leases.claimOrphanedRuns(db, { owner, leaseMs, limit: CLAIM_BATCH, everyOtherOwner });
    // A full batch: look again at once, until every orphan is claimed (other instances claim beside this one: SKIP LOCKED).
    if (claimed.length === CLAIM_BATCH) setImmediate(() => void claimOrphans(everyOtherOwner).catch((error: unknown) => logger.warn({ err: error }, 'continuing runs whose process is gone failed')));
    for (const run of claimed) {
      const { handed_over: handedOver, ...row } = run;
      const reason: ResumeReason = handedOver ? 'HANDED_OVER' : everyOtherOwner ? 'RESTARTED' : 'LEASE_EXPIRED';
      await takeOver(row, reason).catch((error: unknown) => logger.error({ err: error, runId: run.id }, 'could not continue a run taken over; it is claimed again when its lease lapses'));
    }
    return claimed.length;
  }

  const manager: RunManager = {
    async start(actor, rawInput) {
      const { run, events } = await launch(actor, rawInput, true);
      return { run, events: events!, cancel: () => abortDriven(run.id) };
    },

    async startDetached(actor, rawInput) {
      return (await launch(actor, rawInput, false)).run;
    },

    async decide(actor, runId, turnDigest, approved) {
      const decidedAt = new Date().toISOString();
      /** The decision as its APPROVAL step, and where the turn resumes from: stored with the claim for whoever continues the run. */
      const decisionOf = (suspended: SuspendedRun) => ({
        step: {
          kind: 'APPROVAL',
          round: suspended.suspension.round,
          approverId: actor.id,
          approverName: actor.name,
          approved,
          digest: turnDigest,
          decidedAt,
        } as const,
        point: {
          at: 'tools',
          round: suspended.suspension.round,
          state: approved ? suspended.suspension.state : { ...suspended.suspension.state, deniedTurns: (suspended.suspension.state.deniedTurns ?? 0) + 1 },
          calls: suspended.suspension.calls,
          mode: approved ? 'approved' : 'denied',
          done: [],
          started: [],
        } as const,
      });
      const { claimed: run, suspended, configuration, initiator } = await claimDecision(services, actor, runId, turnDigest, approved, {
        owner,
        ms: leaseMs,
        checkpoint: (opened) => {
          if (!resumeRuns) return null;
          const { step, point } = decisionOf(opened);
          return sealCheckpoint(secrets, runId, { point, settings: opened.settings, allowList: opened.allowList, approval: step });
        },
      });
      const { step: decisionStep, point: decisionPoint } = decisionOf(suspended);
      const runLogger = logger.child({ runId: run.id });
      const telemetry = observeRun(services.metrics, {
        runId: run.id,
        configurationId: configuration.id,
        userId: run.user_id,
        level: run.privacy_level,
        startedIn: run.trace_parent,
        decision: { approved, digest: turnDigest },
      });
      // Published once the claim committed, before the resumed run's first step.
      bus.publish({ type: 'decided', runId: run.id, digest: turnDigest, approved, decidedBy: { id: actor.id, name: actor.name }, run: withoutCheckpoint(run) });
      drive({
        run,
        epoch: run.lease_epoch,
        telemetry,
        logger: runLogger,
        afterSequence: await runs.lastStepSequence(db, run.id),
        progress: { iterations: run.iterations, usage: { promptTokens: run.prompt_tokens, completionTokens: run.completion_tokens, cost: run.estimated_cost } },
        context: suspended,
        before: (recorder) => storeDecision(recorder, decisionStep, decisionPoint, telemetry, runLogger, run),
        loop: (request) => resumeRun(services, { ...request, runId: run.id, configurationId: configuration.id, actor: initiator }, suspended, { approved }),
      });
      return run;
    },

    suspendedState: (run) => openSuspendedRun(services, run),

    async cancel(actor, runId) {
      const run = await visibleRun(db, actor, runId);
      if (!run) throw new NotFoundError('Run', runId);
      const driven = active.get(run.id);
      if (driven) {
        driven.controller.abort();
        return run;
      }
      if (run.status === 'WAITING_FOR_APPROVAL') return (await cancelWaitingRun(run)) ?? run;
      if (run.status === 'RUNNING' && (await runs.requestCancel(db, run.id))) services.cancellations.publish({ runId: run.id });
      return run;
    },

    async cancelRunsOf(userId) {
      for (const entry of active.values()) if (entry.userId === userId) entry.controller.abort();
      for (const run of await runs.listWaitingRuns(db, userId)) await cancelWaitingRun(run);
    },

    async replay(runId, afterSequence) {
      const rows = await runs.listRunSteps(db, runId, afterSequence, 100_000);
      return rows.map((row) => ({ sequence: row.sequence, step: row.payload as unknown as StoredStep }));
    },

    subscribe: (runId) => bus.subscribe(runId),

    async settleStale() {
      const settled = resumeRuns ? [] : await runs.settleStaleRuns(db, leaseMs);
      if (settled.length > 0) logger.warn({ runs: settled.map((run) => run.id) }, 'settled runs whose process stopped as INTERRUPTED');
      // Their watchers and the live lists learn it like any other end of a run.
      for (const run of settled) bus.publish({ type: 'finished', runId: run.id, finalContent: null, run });
      for (const run of settled) countSettledRun(services.metrics, run);
      return settled.length + (await claimOrphans());
    },

    async stop() {
      stopping = true;
      clearInterval(heartbeat);
      clearInterval(claimer);
      stopListening();
      stopped.abort();
      const wait = async (entries: { done: Promise<void> }[], ms: number) => {
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
        return (await Promise.race([Promise.all(entries.map((entry) => entry.done)), deadline]).finally(() => clearTimeout(timer))) === 'late';
      };
      if (resumeRuns) {
        // A deploy: each run stops at its next step boundary and another instance continues it.
        for (const { handover } of active.values()) handover.abort();
        if (!(await wait([...active.values()], stopTimeoutMs))) return;
      }
      for (const { controller } of active.values()) controller.abort();
      if (await wait([...active.values()], resumeRuns ? Math.min(stopTimeoutMs, 2_000) : stopTimeoutMs)) {
        logger.warn(
          { runs: [...active.keys()], stopTimeoutMs },
          resumeRuns ? 'runs did not stop in time; another instance continues them when their lease lapses' : 'runs did not settle in time; the stale-heartbeat sweep will settle them INTERRUPTED',
        );
      }
    },
  };

  const stopListening = services.cancellations.subscribe(({ runId }) => abortDriven(runId));

  // Renew this process's leases (and stop the runs cancelled elsewhere or taken over after a pause).
  const heartbeat = setInterval(() => {
    const held = [...active].map(([runId, entry]) => ({ runId, epoch: entry.epoch, controller: entry.controller }));
    void leases
      .renewLeases(db, owner, held, leaseMs)
      .then(({ cancelled, lost }) => {
        cancelled.forEach(abortDriven);
        // Only the drive that held that lease: a run parked meanwhile may already be driven again under a new one.
        const gone = held.filter((lease) => lost.includes(lease.runId) && active.get(lease.runId)?.controller === lease.controller);
        if (gone.length > 0) logger.warn({ runs: gone.map((lease) => lease.runId) }, 'runs taken over by another process while this one was away; stopping them here');
        for (const lease of gone) lease.controller.abort();
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'run heartbeat failed'));
  }, heartbeatMs);
  heartbeat.unref();
  // Continue (or settle) the runs whose process is gone.
  const claimer = setInterval(() => {
    void manager.settleStale().catch((error: unknown) => logger.warn({ err: error }, 'looking for runs whose process stopped failed'));
  }, claimEveryMs);
  claimer.unref();
  if (options.claimOrphansAtStart) void claimOrphans(true).catch((error: unknown) => logger.warn({ err: error }, 'continuing the runs of the previous process failed'));
  return manager;
}

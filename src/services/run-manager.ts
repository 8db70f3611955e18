import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RunRow } from '../db/database.ts';
import { createRunRepository } from '../db/run-repository.ts';
import { loadRunSetup } from '../db/repositories/run-setup.ts';
import * as runs from '../db/repositories/runs.ts';
import { ForbiddenError, NotFoundError, RunLimitError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { countSettledRun, observeRun, type RunTelemetry } from '../observability/run-telemetry.ts';
import type { Broadcast } from '../runtime/broadcast.ts';
import type { RunBusEvent, RunEventBus } from '../runtime/events.ts';
import type { RunOutcome, RunStep } from '../runtime/run.ts';
import { filterRunContent, type PrivacyLevel, type StoredStep } from '../runtime/privacy.ts';
import { createRunRecorder, type RunRecorder } from '../runtime/run-recorder.ts';
import type { Actor } from '../tools/tool.ts';
import { claimDecision, openSuspendedRun, sealSuspendedRun, visibleRun } from './approvals.ts';
import { executeRun, resumeRun, type RunExecutionDeps, type SuspendedRun } from './run-execution.ts';
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
  /** How often a process proves its runs are alive (default 10 s). */
  readonly heartbeatMs?: number;
  /**
   * How long `stop` waits for interrupted runs to settle (default 8 s): a run still busy then (a
   * tool or a write that ignores cancellation) is left RUNNING for the stale-heartbeat sweep.
   */
  readonly stopTimeoutMs?: number;
  /**
   * RUNNING runs one user may have at once (default 8; 0 = no limit). A start beyond it is refused
   * with RunLimitError before anything is stored. Runs WAITING_FOR_APPROVAL do not count: they hold
   * no provider call, no loop and no connection while they wait; an approved run resumes even when
   * its user is at the limit (the human decision is not refused after the fact).
   */
  readonly maxRunningRunsPerUser?: number;
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
  /** Settles runs whose process died (stale heartbeat); returns how many. */
  settleStale(): Promise<number>;
  /** Interrupts every active run and waits for them to settle. */
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

/**
 * Drives runs in the background of the subscriptions that asked for them: creates the run row,
 * feeds each step to the recorder, parks runs that wait for approval (state sealed at rest),
 * resumes them on a verified decision, settles exactly once, keeps a heartbeat, and lets a run be
 * cancelled by its client, by `cancelRun`, or interrupted by a graceful stop.
 *
 * Longer than our ~250-line habit on purpose: start, resume, park-or-settle, cancel and the
 * heartbeat share one process's `active` map and `stopping` flag; split, that one lifecycle would be
 * read across files. The approval rules live in approvals.ts, the loop's inputs in run-execution.ts.
 */
export function createRunManager(services: RunManagerDeps, options: RunManagerOptions = {}): RunManager {
  const { db, logger, secrets, bus, writer } = services;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 8_000;
  const maxRunning = options.maxRunningRunsPerUser ?? 8;
  /** Runs this process drives, by run id, with the user they run as. */
  const active = new Map<string, { controller: AbortController; done: Promise<void>; userId: string | null }>();
  const abortDriven = (runId: string) => active.get(runId)?.controller.abort();
  let stopping = false;
  /** Aborted by `stop`: recorders then stop retrying to store a run's end (the sweep settles it). */
  const stopped = new AbortController();

  const repository = createRunRepository(db, writer);

  /** After the loop returns: park the run (sealed state) or settle it; both publish their event. */
  async function conclude(
    run: RunRow,
    recorder: RunRecorder<RunRow>,
    outcome: RunOutcome,
    runLogger: Logger,
    context: Omit<SuspendedRun, 'suspension'> | null,
    telemetry: RunTelemetry,
  ): Promise<void> {
    const settle = async (end: RunOutcome) => {
      if (await recorder.settle(end)) telemetry.settled(end, run.created_at);
    };
    // Every step is stored before the run is parked (a resume continues after the last one) or settled.
    await recorder.flushed();
    if (stopping && outcome.status === 'CANCELLED') {
      outcome = { ...outcome, status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage: 'The server stopped before the run finished.' };
    }
    if (outcome.status === 'WAITING_FOR_APPROVAL' && outcome.suspension) {
      try {
        if (!context) throw new Error('no run context to store with the suspension');
        const stored: SuspendedRun = { ...context, suspension: outcome.suspension };
        const parked = await runs.suspendRun(db, run.id, {
          sealedState: sealSuspendedRun(secrets, run.id, stored),
          digest: outcome.suspension.digest,
          iterations: outcome.iterations,
          promptTokens: outcome.usage.promptTokens,
          completionTokens: outcome.usage.completionTokens,
          estimatedCost: outcome.usage.cost,
        });
        if (!parked) throw new Error('the run was no longer RUNNING');
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

  function track(runId: string, userId: string | null, body: (controller: AbortController) => Promise<void>, runLogger: Logger): void {
    const controller = new AbortController();
    const done = body(controller)
      .catch((error: unknown) => runLogger.error({ err: error }, 'could not settle the run'))
      // A resumed run is tracked again under the same id: only forget the entry this body owns.
      .finally(() => {
        if (active.get(runId)?.controller === controller) active.delete(runId);
      });
    active.set(runId, { controller, done, userId });
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
   * Creates the run row (within the cap) and drives the loop in the background. `subscribe` opens
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
    const runLogger = logger.child({ runId: run.id });
    track(
      run.id,
      actor.id,
      async (controller) => {
        const recorder = createRunRecorder({
          runId: run.id,
          level,
          repository,
          bus,
          logger: runLogger,
          stopSignal: stopped.signal,
          stateVersion: run.state_version,
        });
        let outcome: RunOutcome;
        let context: Omit<SuspendedRun, 'suspension'> | null = null;
        try {
          const result = await telemetry.within(() =>
            executeRun(services, {
              runId: run.id,
              configurationId: configuration.id,
              setup,
              prompt: input.prompt,
              actor,
              selection,
              signal: controller.signal,
              onStep: (step) => (telemetry.step(step), recorder.recordStep(step)),
              observer: telemetry.observer,
              spanContent: telemetry.spanContent,
            }),
          );
          outcome = result.outcome;
          context = {
            allowList: result.input.gate.allowList === null ? null : [...result.input.gate.allowList],
            settings: result.input.settings,
          };
        } catch (error) {
          runLogger.error({ err: error }, 'run failed unexpectedly');
          outcome = failure(FAILED_UNEXPECTEDLY);
        }
        await conclude(run, recorder, outcome, runLogger, context, telemetry);
      },
      runLogger,
    );
    bus.publish({ type: 'started', runId: run.id, run });
    return { run, events };
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
      const { claimed: run, suspended, configuration, initiator } = await claimDecision(services, actor, runId, turnDigest, approved);
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
      bus.publish({ type: 'decided', runId: run.id, digest: turnDigest, approved, decidedBy: { id: actor.id, name: actor.name }, run });
      track(
        run.id,
        run.user_id,
        async (controller) => {
          const recorder = createRunRecorder({
            runId: run.id,
            level: run.privacy_level,
            repository,
            bus,
            logger: runLogger,
            stopSignal: stopped.signal,
            afterSequence: await runs.lastStepSequence(db, run.id),
            stateVersion: run.state_version,
            progress: {
              iterations: run.iterations,
              usage: { promptTokens: run.prompt_tokens, completionTokens: run.completion_tokens, cost: run.estimated_cost },
            },
          });
          const decisionStep: RunStep = {
            kind: 'APPROVAL',
            round: suspended.suspension.round,
            approverId: actor.id,
            approverName: actor.name,
            approved,
            digest: turnDigest,
            decidedAt: new Date().toISOString(),
          };
          try {
            // Stored BEFORE any write runs; if it cannot be stored, nothing of the turn runs.
            await recorder.recordRequiredStep(decisionStep);
          } catch (error) {
            runLogger.error({ err: error }, 'could not store the approval decision; the writes do not run');
            const soFar = { ...failure(''), iterations: suspended.suspension.state.iterations, usage: suspended.suspension.state.usage };
            const end = failure('The approval decision could not be stored, so the approved calls did not run.', soFar);
            if (await recorder.settle(end)) telemetry.settled(end, run.created_at);
            return;
          }
          let outcome: RunOutcome;
          try {
            outcome = await telemetry.within(() =>
              resumeRun(
                services,
                {
                  runId: run.id,
                  configurationId: configuration.id,
                  actor: initiator,
                  signal: controller.signal,
                  onStep: (step) => (telemetry.step(step), recorder.recordStep(step)),
                  observer: telemetry.observer,
                  spanContent: telemetry.spanContent,
                },
                suspended,
                { approved },
              ),
            );
          } catch (error) {
            runLogger.error({ err: error }, 'resumed run failed unexpectedly');
            outcome = failure(FAILED_UNEXPECTEDLY);
          }
          await conclude(run, recorder, outcome, runLogger, suspended, telemetry);
        },
        runLogger,
      );
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
      const settled = await runs.settleStaleRuns(db, heartbeatMs * 3);
      if (settled.length > 0) logger.warn({ runs: settled.map((run) => run.id) }, 'settled runs whose process stopped as INTERRUPTED');
      // Their watchers and the live lists learn it like any other end of a run.
      for (const run of settled) bus.publish({ type: 'finished', runId: run.id, finalContent: null, run });
      for (const run of settled) countSettledRun(services.metrics, run);
      return settled.length;
    },

    async stop() {
      stopping = true;
      clearInterval(heartbeat);
      stopListening();
      stopped.abort();
      for (const { controller } of active.values()) controller.abort();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), stopTimeoutMs)));
      const settled = Promise.all([...active.values()].map((entry) => entry.done));
      if ((await Promise.race([settled, deadline]).finally(() => clearTimeout(timer))) === 'late') {
        logger.warn({ runs: [...active.keys()], stopTimeoutMs }, 'runs did not settle in time; the stale-heartbeat sweep will settle them INTERRUPTED');
      }
    },
  };

  const stopListening = services.cancellations.subscribe(({ runId }) => abortDriven(runId));

  // One timer: prove this process's runs are alive (and stop those cancelled elsewhere), and settle
  // runs whose process is gone.
  const heartbeat = setInterval(() => {
    void runs
      .touchRuns(db, [...active.keys()])
      .then((cancelled) => cancelled.forEach(abortDriven))
      .catch((error: unknown) => logger.warn({ err: error }, 'run heartbeat failed'));
    void manager.settleStale().catch((error: unknown) => logger.warn({ err: error }, 'settling stale runs failed'));
  }, heartbeatMs);
  heartbeat.unref();
  return manager;
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db, RunRow } from '../db/database.ts';
import { findConfigurationsByIds } from '../db/repositories/configurations.ts';
import * as runs from '../db/repositories/runs.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { RunBusEvent, RunEventBus } from '../runtime/events.ts';
import type { RunOutcome } from '../runtime/loop.ts';
import { filterRunContent, type PrivacyLevel, type StoredStep } from '../runtime/privacy.ts';
import { createRunRecorder, type RunRepository } from '../runtime/run-store.ts';
import type { Actor } from '../tools/tool.ts';
import type { Services } from '../context.ts';
import { executeRun } from './agent-runs.ts';
import { isUuid, parseInput } from './validate.ts';

export interface RunManagerOptions {
  /** How often a process proves its runs are alive (default 10 s). */
  readonly heartbeatMs?: number;
}

export interface StartedRun {
  readonly run: RunRow;
  /** Bus events of this run, subscribed BEFORE the loop started, so nothing is missed. */
  readonly events: AsyncIterableIterator<RunBusEvent>;
  /** Cancels the run at its next step boundary (a client that completes or disconnects). */
  cancel(): void;
}

export interface RunManager {
  start(actor: Actor, input: unknown): Promise<StartedRun>;
  /** Owner or admin; cancels a run driven by THIS process (others are reached through their own). */
  cancel(actor: Actor, runId: string): Promise<RunRow>;
  /** The stored run, if the actor may see it (owner or admin). */
  visibleRun(actor: Actor, runId: string): Promise<RunRow | null>;
  /** Stored steps after `afterSequence`, as the persisted (filtered) copy. */
  replay(runId: string, afterSequence: number): Promise<{ sequence: number; step: StoredStep }[]>;
  subscribe(runId: string): AsyncIterableIterator<RunBusEvent>;
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
});

function repositoryOver(db: Db): RunRepository {
  return {
    insertStep: (runId, sequence, step) =>
      runs.insertRunStep(db, { runId, sequence, kind: step.kind, round: step.round, durationMs: step.durationMs, payload: step }),
    settle: async (runId, outcome: RunOutcome, storedFinalContent) =>
      (await runs.settleRun(db, runId, {
        status: outcome.status,
        terminationReason: outcome.terminationReason,
        truncated: outcome.truncated,
        iterations: outcome.iterations,
        finalContent: storedFinalContent,
        promptTokens: outcome.usage.promptTokens,
        completionTokens: outcome.usage.completionTokens,
        estimatedCost: outcome.usage.cost,
        errorMessage: outcome.errorMessage,
      })) !== undefined,
    markAuditIncomplete: (runId) => runs.markAuditIncomplete(db, runId),
  };
}

/**
 * Drives runs in the background of the subscriptions that asked for them: creates the run row,
 * feeds each step to the recorder, settles exactly once, keeps a heartbeat, and lets a run be
 * cancelled by its client, by `cancelRun`, or interrupted by a graceful stop.
 */
export function createRunManager(services: Omit<Services, 'runs'>, bus: RunEventBus, options: RunManagerOptions = {}): RunManager {
  const { db, logger } = services;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const active = new Map<string, { controller: AbortController; userId: string | null; done: Promise<void> }>();
  let stopping = false;
  // One timer: prove this process's runs are alive, and settle runs whose process is gone.
  const heartbeat = setInterval(() => {
    void runs.touchRuns(db, [...active.keys()]).catch((error: unknown) => logger.warn({ err: error }, 'run heartbeat failed'));
    void manager.settleStale().catch((error: unknown) => logger.warn({ err: error }, 'settling stale runs failed'));
  }, heartbeatMs);
  heartbeat.unref();

  async function drive(run: RunRow, actor: Actor, input: z.output<typeof runInputSchema>, controller: AbortController, runLogger: Logger) {
    const recorder = createRunRecorder({ runId: run.id, level: run.privacy_level, repository: repositoryOver(db), bus, logger: runLogger });
    let outcome: RunOutcome;
    try {
      ({ outcome } = await executeRun(services as Services, {
        runId: run.id,
        configurationId: input.configurationId,
        prompt: input.prompt,
        actor,
        selection: input.tools ?? null,
        signal: controller.signal,
        onStep: (step) => recorder.recordStep(step),
      }));
    } catch (error) {
      runLogger.error({ err: error }, 'run failed unexpectedly');
      outcome = {
        status: 'FAILED',
        terminationReason: 'PROVIDER_FAILED',
        truncated: false,
        iterations: 0,
        finalContent: null,
        usage: { promptTokens: 0, completionTokens: 0, cost: 0 },
        errorMessage: 'The run failed unexpectedly; see the server log.',
      };
    }
    if (stopping && outcome.status === 'CANCELLED') {
      outcome = { ...outcome, status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage: 'The server stopped before the run finished.' };
    }
    await recorder.settle(outcome);
  }

  const manager: RunManager = {
    async start(actor, rawInput) {
      if (stopping) throw new ForbiddenError('The server is shutting down; start the run again in a moment.');
      const input = parseInput(runInputSchema, rawInput);
      const [configuration] = isUuid(input.configurationId) ? await findConfigurationsByIds(db, [input.configurationId]) : [];
      if (!configuration) throw new NotFoundError('Configuration', input.configurationId);
      const level: PrivacyLevel = configuration.privacy_level;
      const stored = filterRunContent(level, { prompt: input.prompt, finalContent: null });
      const run = await runs.insertRun(db, {
        id: randomUUID(),
        configuration_id: configuration.id,
        user_id: actor.id,
        status: 'RUNNING',
        prompt: stored.prompt,
        privacy_level: level,
        tool_selection: input.tools ? JSON.stringify(input.tools) : null,
      });
      const events = bus.subscribe(run.id);
      const controller = new AbortController();
      const runLogger = logger.child({ runId: run.id });
      const done = drive(run, actor, input, controller, runLogger)
        .catch((error: unknown) => runLogger.error({ err: error }, 'could not settle the run'))
        .finally(() => active.delete(run.id));
      active.set(run.id, { controller, userId: actor.id, done });
      bus.publish({ type: 'started', runId: run.id });
      return { run, events, cancel: () => controller.abort() };
    },

    async cancel(actor, runId) {
      const run = await manager.visibleRun(actor, runId);
      if (!run) throw new NotFoundError('Run', runId);
      active.get(run.id)?.controller.abort();
      return run;
    },

    async visibleRun(actor, runId) {
      const [run] = await runs.findRunsByIds(db, [runId]);
      if (!run) return null;
      return actor.isAdmin || run.user_id === actor.id ? run : null;
    },

    async replay(runId, afterSequence) {
      const rows = await runs.listRunSteps(db, runId, afterSequence, 100_000);
      return rows.map((row) => ({ sequence: row.sequence, step: row.payload as unknown as StoredStep }));
    },

    subscribe: (runId) => bus.subscribe(runId),

    async settleStale() {
      const settled = await runs.settleStaleRuns(db, heartbeatMs * 3);
      if (settled.length > 0) logger.warn({ runs: settled }, 'settled runs whose process stopped as INTERRUPTED');
      return settled.length;
    },

    async stop() {
      stopping = true;
      clearInterval(heartbeat);
      for (const { controller } of active.values()) controller.abort();
      await Promise.all([...active.values()].map((entry) => entry.done));
    },
  };
  return manager;
}

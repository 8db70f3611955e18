import { z } from 'zod';
import type { RunRow } from '../../db/database.ts';
import { loadRunSetup } from '../../db/repositories/run-setup.ts';
import * as runs from '../../db/repositories/runs.ts';
import { ForbiddenError, NotFoundError, RunLimitError } from '../../errors.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { observeRun } from '../../observability/run-telemetry.ts';
import type { RunBusEvent, RunEventBus } from '../../runtime/events.ts';
import { filterRunContent, type PrivacyLevel } from '../../runtime/privacy.ts';
import type { Actor } from '../../tools/tool.ts';
import { sealCheckpoint } from '../run-checkpoints.ts';
import { executeRun, type RunExecutionDeps } from '../run-execution.ts';
import { runSelectionOf } from '../tool-access.ts';
import { parseInput } from '../validate.ts';
import { withoutCheckpoint, type Drive } from './drive.ts';
import { newRunId } from './run-id.ts';

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

/** What starting a run reads and writes. */
export interface LaunchDeps {
  readonly services: RunExecutionDeps & { readonly bus: RunEventBus<RunRow>; readonly metrics?: Metrics };
  /** This process as a lease owner, and the lease a new run is stored with. */
  readonly owner: string;
  readonly leaseMs: number;
  /** AIRLOCK_RESUME_RUNS: a new run is stored with its sealed prompt, to start again from elsewhere. */
  readonly resumeRuns: boolean;
  /** RUNNING runs one user may have at once (0 = no limit); see RunHostOptions.maxRunningRunsPerUser. */
  readonly maxRunning: number;
  /** Aborted when the host stops: no run starts any more. */
  readonly stopSignal: AbortSignal;
  /** Drives the stored run in the background. */
  drive(drive: Drive): void;
}

export interface LaunchedRun {
  readonly run: RunRow;
  /** The run's bus subscription, opened before its loop started; null for a detached run. */
  readonly events: AsyncIterableIterator<RunBusEvent<RunRow>> | null;
}

/**
 * Creates the run row (within the cap, with this process's lease and, for durable runs, the
 * sealed prompt to start again from) and drives the loop in the background. `subscribe` opens
 * the run's bus subscription BEFORE the loop starts (an attached caller misses nothing); a
 * detached run opens none. Invalid input, an unknown configuration and a refusal by the cap
 * throw before anything is stored.
 */
export async function launchRun(deps: LaunchDeps, actor: Actor, rawInput: unknown, subscribe: boolean): Promise<LaunchedRun> {
  const { services, owner, leaseMs, resumeRuns, maxRunning } = deps;
  const { db, bus, logger } = services;
  if (deps.stopSignal.aborted) throw new ForbiddenError('The server is shutting down; start the run again in a moment.');
  const input = parseInput(runInputSchema, rawInput);
  // Stored and run EXPANDED (the tools of the ticked groups as registered at start): what ran.
  const selection = runSelectionOf(services.registry, input.tools, input.toolGroups);
  const setup = await loadRunSetup(db, input.configurationId, actor.id);
  if (!setup) throw new NotFoundError('Configuration', input.configurationId);
  const { configuration } = setup;
  const level: PrivacyLevel = configuration.privacy_level;
  const storedContent = filterRunContent(level, { prompt: input.prompt, finalContent: null });
  const runId = newRunId();
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
    lease: { owner, ms: leaseMs, checkpoint: resumeRuns ? sealCheckpoint(services.secrets, runId, { start: { prompt: input.prompt } }) : null },
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
  deps.drive({
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

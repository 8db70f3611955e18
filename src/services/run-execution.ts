import { effectiveSkills, type ConfigurationView } from '../access/allowed-tools.ts';
import type { GateInput } from '../access/gate.ts';
import type { Db } from '../db/database.ts';
import type { RunWriter } from '../db/run-batch-writer.ts';
import type { SecretBox } from '../db/secret-box.ts';
import type { Logger, SecretScrubber } from '../logger.ts';
import type { ToolData } from '../tools/data.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { loadRunSetup, type RunSetup } from '../db/repositories/run-setup.ts';
import { findSkillsByIds } from '../db/repositories/skills.ts';
import { NotFoundError } from '../errors.ts';
import { providerAdapterFor } from '../providers/adapter-for.ts';
import type { ApprovalDecision, Suspension } from '../runtime/approval.ts';
import { continueLoop, resumeLoop, runLoop } from '../runtime/loop.ts';
import type { LoopInput, LoopSettings } from '../runtime/loop-session.ts';
import type { ResumePoint } from '../runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../runtime/run.ts';
import { composeSystemPrompt } from '../runtime/system-prompt.ts';
import type { LoopObserver, SpanContent } from '../runtime/telemetry.ts';
import type { Actor } from '../tools/tool.ts';
import { createBudgetGuard, type RunBudgetGuard } from './budget-guard.ts';
import { revealApiKey, revealHeaders } from './providers.ts';
import { newRunId } from './run-host/run-id.ts';
import { configurationView, gateInputFor } from './tool-access.ts';

export interface RunRequest {
  readonly configurationId: string;
  /** The run's setup when the caller already read it (`loadRunSetup`). */
  readonly setup?: RunSetup;
  readonly prompt: string;
  readonly actor: Actor | null;
  /** The run's own tool selection, intersected with the configuration's allow-list. */
  readonly selection?: readonly string[] | null;
  readonly signal: AbortSignal;
  readonly runId?: string;
  onStep(step: RunStep, resumeFrom?: ResumePoint): Promise<void> | void;
  /** Durable runs: stores a resume point now (LoopInput.checkpoint), and the signal of a handover. */
  checkpoint?(point: ResumePoint): Promise<void>;
  readonly handover?: AbortSignal;
  /** Learns the options and allow-list the loop runs with, before its first step (what a checkpoint stores beside its point). */
  onPrepared?(context: Omit<SuspendedRun, 'suspension'>): void;
  /** Metrics of the loop's calls, and what its spans may say of content (LoopInput). */
  readonly observer?: LoopObserver;
  readonly spanContent?: SpanContent;
}

/** What preparing and running the loop reads: the database, the tools, the key box, the usage writer. */
export interface RunExecutionDeps {
  readonly db: Db;
  readonly registry: ToolRegistry;
  readonly toolData: ToolData;
  readonly secrets: SecretBox;
  /** Learns each revealed provider key, so the logger masks it. */
  readonly scrubber: SecretScrubber;
  readonly logger: Logger;
  readonly writer: RunWriter;
  readonly config: { readonly toolTimeoutMs: number };
}

/** What a suspended run must keep to resume: the loop's state plus the options it ran with. */
export interface SuspendedRun {
  readonly suspension: Suspension;
  /** The allow-list in force when the turn was offered; the switches are re-read on resume. */
  readonly allowList: readonly string[] | null;
  readonly settings: LoopSettings;
}

/** Everything of the loop input that does not depend on the allow-list. */
async function prepare(
  services: RunExecutionDeps,
  request: Omit<RunRequest, 'prompt'> & { prompt: string },
  gateFor: (setup: RunSetup, view: () => Promise<ConfigurationView>) => Promise<GateInput>,
  settingsOverride?: LoopSettings,
): Promise<LoopInput & { readonly budget: RunBudgetGuard }> {
  const { db, registry } = services;
  const setup = request.setup ?? (await loadRunSetup(db, request.configurationId, request.actor?.id ?? null));
  if (!setup) throw new NotFoundError('Configuration', request.configurationId);
  const { configuration, model, provider: providerRow } = setup;
  if (!model) throw new NotFoundError('Model', configuration.model_id);
  if (!providerRow) throw new NotFoundError('Provider', model.provider_id);
  let view: Promise<ConfigurationView> | null = null;
  const viewOnce = () => (view ??= configurationView(db, configuration, setup.skillIds));
  const settingsOf = async (): Promise<LoopSettings> => {
    const skills = effectiveSkills(await viewOnce());
    const bodies = new Map((await findSkillsByIds(db, skills.map((skill) => skill.id))).map((row) => [row.id, row.body]));
    const system = composeSystemPrompt(
      configuration.system_prompt,
      skills.map((skill) => ({ name: skill.name, body: bodies.get(skill.id) ?? '' })),
    );
    return {
      systemPrompt: system.text,
      temperature: configuration.temperature,
      maxTokens: configuration.max_tokens ?? model.max_tokens,
      maxIterations: configuration.max_iterations,
      quarantineToolOutput: configuration.quarantine_tool_output,
      truncation: configuration.truncation,
      toolTimeoutMs: services.config.toolTimeoutMs,
      maxRemoteToolCalls: configuration.max_remote_tool_calls,
    };
  };
  const [settings, gate] = await Promise.all([settingsOverride ?? settingsOf(), gateFor(setup, viewOnce)]);

  const runId = request.runId ?? newRunId();
  const keys = { secrets: services.secrets, onSecret: (value: string) => services.scrubber.add(value) };
  const provider = providerAdapterFor({
    kind: providerRow.kind,
    baseUrl: providerRow.base_url,
    apiKey: revealApiKey(keys, providerRow),
    settings: providerRow.settings,
    headers: revealHeaders(keys, providerRow),
  });
  const logger = services.logger.child({ runId });
  request.onPrepared?.({ settings, allowList: gate.allowList === null ? null : [...gate.allowList] });
  return {
    runId,
    prompt: request.prompt,
    settings,
    model: {
      providerModelId: model.provider_model_id,
      inputPricePerMTok: model.input_price_per_mtok,
      outputPricePerMTok: model.output_price_per_mtok,
    },
    provider,
    registry,
    gate,
    budget: createBudgetGuard(
      { db, writer: services.writer, logger },
      { userId: request.actor?.id ?? null, configurationId: configuration.id, modelId: model.id, runId },
      { budgets: setup.budgets },
    ),
    toolData: services.toolData,
    logger,
    signal: request.signal,
    onStep: request.onStep,
    ...(request.checkpoint ? { checkpoint: request.checkpoint } : {}),
    ...(request.handover ? { handover: request.handover } : {}),
    ...(request.observer ? { observer: request.observer } : {}),
    ...(request.spanContent ? { spanContent: request.spanContent } : {}),
  };
}

/**
 * Resolves everything a run needs from the database (configuration, model, provider and its key,
 * skills, switches, budgets), then runs the loop. No persistence of the run itself here.
 */
export async function executeRun(services: RunExecutionDeps, request: RunRequest): Promise<{ runId: string; outcome: RunOutcome; input: LoopInput }> {
  const input = await prepare(services, request, (setup, view) =>
    gateInputFor(services.db, services.registry, setup.configuration, request.actor, request.selection, { view: view(), state: setup.toolState }),
  );
  try {
    return { runId: input.runId, outcome: await runLoop(input), input };
  } finally {
    // The run's usage is stored by the time it ends (the last call's row may still be queued), handed over or not.
    await input.budget.flushed();
  }
}

/**
 * The loop input of a run that goes on from where it stopped (after a decision, or taken over):
 * the same configuration and provider, the stored allow-list and options, and the CURRENT switches
 * (a tool disabled meanwhile is refused).
 */
function prepareContinued(
  services: RunExecutionDeps,
  request: Omit<RunRequest, 'prompt' | 'selection'> & { runId: string },
  stored: Omit<SuspendedRun, 'suspension'>,
) {
  return prepare(
    services,
    { ...request, prompt: '' },
    async (setup) => ({
      registry: services.registry,
      state: setup.toolState,
      actor: request.actor,
      allowList: stored.allowList === null ? null : new Set(stored.allowList),
    }),
    stored.settings,
  );
}

/** Continues a suspended run after a decision (see `prepareContinued`). */
export async function resumeRun(
  services: RunExecutionDeps,
  request: Omit<RunRequest, 'prompt' | 'selection'> & { runId: string },
  suspended: SuspendedRun,
  decision: ApprovalDecision,
): Promise<RunOutcome> {
  const input = await prepareContinued(services, request, suspended);
  try {
    return await resumeLoop(input, suspended.suspension, decision);
  } finally {
    await input.budget.flushed();
  }
}

/** Continues a run taken over from another process, from its last stored resume point (see `prepareContinued`). */
export async function continueRun(
  services: RunExecutionDeps,
  request: Omit<RunRequest, 'prompt' | 'selection'> & { runId: string },
  stored: Omit<SuspendedRun, 'suspension'> & { readonly point: ResumePoint },
): Promise<RunOutcome> {
  const input = await prepareContinued(services, request, stored);
  try {
    return await continueLoop(input, stored.point);
  } finally {
    await input.budget.flushed();
  }
}

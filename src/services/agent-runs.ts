import { randomUUID } from 'node:crypto';
import { effectiveSkills } from '../access/allowed-tools.ts';
import type { Services } from '../context.ts';
import { findConfigurationsByIds } from '../db/repositories/configurations.ts';
import { findModelsByIds } from '../db/repositories/models.ts';
import { findProvidersByIds } from '../db/repositories/providers.ts';
import { findSkillsByIds } from '../db/repositories/skills.ts';
import { NotFoundError } from '../errors.ts';
import { createProvider } from '../providers/create-provider.ts';
import { runLoop, type RunOutcome, type RunStep } from '../runtime/loop.ts';
import { composeSystemPrompt } from '../runtime/system-prompt.ts';
import type { Actor } from '../tools/tool.ts';
import { createBudgetGuard } from './budget-guard.ts';
import { revealApiKey } from './providers.ts';
import { configurationView, gateInputFor } from './tool-access.ts';
import { isUuid } from './validate.ts';

export interface RunRequest {
  readonly configurationId: string;
  readonly prompt: string;
  readonly actor: Actor | null;
  /** The run's own tool selection, intersected with the configuration's allow-list. */
  readonly selection?: readonly string[] | null;
  readonly signal: AbortSignal;
  readonly runId?: string;
  onStep(step: RunStep): Promise<void> | void;
}

/**
 * Resolves everything a run needs from the database (configuration, model, provider and its key,
 * skills, switches, budgets), then runs the loop. No persistence of the run itself here.
 */
export async function executeRun(services: Services, request: RunRequest): Promise<{ runId: string; outcome: RunOutcome }> {
  const { db, registry } = services;
  const [configuration] = isUuid(request.configurationId) ? await findConfigurationsByIds(db, [request.configurationId]) : [];
  if (!configuration) throw new NotFoundError('Configuration', request.configurationId);
  const [model] = await findModelsByIds(db, [configuration.model_id]);
  if (!model) throw new NotFoundError('Model', configuration.model_id);
  const [providerRow] = await findProvidersByIds(db, [model.provider_id]);
  if (!providerRow) throw new NotFoundError('Provider', model.provider_id);

  const runId = request.runId ?? randomUUID();
  const view = await configurationView(db, configuration);
  const skills = effectiveSkills(view);
  const bodies = new Map((await findSkillsByIds(db, skills.map((skill) => skill.id))).map((row) => [row.id, row.body]));
  const system = composeSystemPrompt(
    configuration.system_prompt,
    skills.map((skill) => ({ name: skill.name, body: bodies.get(skill.id) ?? '' })),
  );
  const provider = createProvider({
    kind: providerRow.kind,
    baseUrl: providerRow.base_url,
    apiKey: revealApiKey({ secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) }, providerRow),
    settings: providerRow.settings,
  });
  const logger = services.logger.child({ runId });
  const outcome = await runLoop({
    runId,
    prompt: request.prompt,
    settings: {
      systemPrompt: system.text,
      temperature: configuration.temperature,
      maxTokens: configuration.max_tokens ?? model.max_tokens,
      maxIterations: configuration.max_iterations,
      quarantineToolOutput: configuration.quarantine_tool_output,
      toolTimeoutMs: services.config.toolTimeoutMs,
    },
    model: {
      providerModelId: model.provider_model_id,
      inputPricePerMTok: model.input_price_per_mtok,
      outputPricePerMTok: model.output_price_per_mtok,
    },
    provider,
    registry,
    gate: await gateInputFor(db, registry, configuration, request.actor, request.selection),
    budget: createBudgetGuard(db, { userId: request.actor?.id ?? null, configurationId: configuration.id, modelId: model.id, runId }),
    toolData: services.toolData,
    logger,
    signal: request.signal,
    onStep: request.onStep,
  });
  return { runId, outcome };
}

import { offeredTools, type GateInput } from '../access/gate.ts';
import { ProviderError, type ChatMessage, type Completion, type LlmProvider, type ToolCall } from '../providers/provider.ts';
import type { Artifact } from '../tools/result.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolLogger } from '../tools/tool.ts';
import type { BudgetDenial } from './budget.ts';
import { invokeTool } from './invoke.ts';
import { addUsage, plannedCost, priceUsage, ZERO_USAGE, type ModelPrices, type PricedUsage } from './usage.ts';

export const RUN_STATUSES = ['RUNNING', 'WAITING_FOR_APPROVAL', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINATION_REASONS = [
  'COMPLETED',
  'MAX_ITERATIONS',
  'BUDGET_EXHAUSTED',
  'PROVIDER_FAILED',
  'APPROVAL_DENIED',
  'CANCELLED',
  'INTERRUPTED',
] as const;
export type TerminationReason = (typeof TERMINATION_REASONS)[number];

/** One step of a run, emitted as it happens (the live stream; persistence filters a copy). */
export type RunStep =
  | {
      readonly kind: 'REQUEST';
      readonly round: number;
      /** The whole transcript sent with this call. */
      readonly messagesSent: readonly ChatMessage[];
      /** Names of the tools offered; null for a plain completion (no tools field on the wire). */
      readonly offeredTools: readonly string[] | null;
    }
  | {
      readonly kind: 'LLM';
      readonly round: number;
      readonly content: string;
      readonly thinking: string | null;
      readonly requestedToolCalls: readonly ToolCall[];
      readonly usage: PricedUsage;
      readonly finishReason: Completion['finishReason'];
      readonly durationMs: number;
    }
  | {
      readonly kind: 'TOOL';
      readonly round: number;
      readonly toolCallId: string;
      readonly toolName: string;
      readonly toolArguments: Readonly<Record<string, unknown>>;
      /** Exactly the string the model received (bounded and sanitised). */
      readonly toolResult: string;
      readonly toolIsError: boolean;
      /** Run-only: never part of any provider request. */
      readonly artifacts: readonly Artifact[];
      readonly durationMs: number;
    };

/** Where budget pre-flight and usage accounting live (the database, in the service). */
export interface BudgetGuard {
  /** The first budget that refuses a call of this planned cost, or null. */
  preflight(plannedCost: number): Promise<BudgetDenial | null>;
  /** Records one provider call's usage (every call, the synthesis included). */
  record(usage: PricedUsage): Promise<void>;
}

export interface LoopModel extends ModelPrices {
  /** The vendor's model id. */
  readonly providerModelId: string;
}

export interface LoopSettings {
  readonly systemPrompt: string;
  readonly temperature: number | null;
  readonly maxTokens: number | null;
  /** Tool rounds before the final answer is forced (default 5). */
  readonly maxIterations: number;
  readonly quarantineToolOutput: boolean;
  /** Per tool call (default 30 s). */
  readonly toolTimeoutMs?: number;
}

export interface LoopInput {
  readonly runId: string;
  readonly prompt: string;
  readonly settings: LoopSettings;
  readonly model: LoopModel;
  readonly provider: LlmProvider;
  readonly registry: ToolRegistry;
  /** Decides what is offered AND re-checks every call at execution time. */
  readonly gate: GateInput;
  readonly budget: BudgetGuard;
  /** `ctx.data` for the tools. */
  readonly toolData: unknown;
  readonly logger: ToolLogger & { child?(bindings: object): ToolLogger };
  /** Cancellation: honoured at every step boundary and passed to provider calls and tools. */
  readonly signal: AbortSignal;
  /** Receives each step in order; awaited, so a slow consumer slows the run rather than losing steps. */
  onStep(step: RunStep): Promise<void> | void;
}

export interface RunOutcome {
  readonly status: Exclude<RunStatus, 'RUNNING' | 'WAITING_FOR_APPROVAL'>;
  readonly terminationReason: TerminationReason;
  readonly truncated: boolean;
  /** The loop's provider calls (a direct answer is 1); never counts the synthesis call. */
  readonly iterations: number;
  readonly finalContent: string | null;
  readonly usage: PricedUsage;
  /** Generic, safe to show: details of failures go to the log only. */
  readonly errorMessage: string | null;
}

class Cancelled extends Error {}

/**
 * The bounded agent loop of DESIGN.md section 5. Plain async function: no GraphQL, no SQL; steps go
 * to `onStep`, the store and the stream are the caller's business.
 */
export async function runLoop(input: LoopInput): Promise<RunOutcome> {
  const { settings, signal } = input;
  const offered = offeredTools(input.gate).map((tool) => tool.name);
  const specs = offered.length > 0 ? input.registry.specs(offered) : null;
  const messages: ChatMessage[] = [];
  if (settings.systemPrompt.trim() !== '') messages.push({ role: 'system', content: settings.systemPrompt });
  messages.push({ role: 'user', content: input.prompt });

  let usage = ZERO_USAGE;
  let iterations = 0;
  let lastContent: string | null = null;
  const finish = (
    status: RunOutcome['status'],
    terminationReason: TerminationReason,
    extra: { truncated?: boolean; finalContent?: string | null; errorMessage?: string | null } = {},
  ): RunOutcome => ({
    status,
    terminationReason,
    truncated: extra.truncated ?? false,
    iterations,
    finalContent: extra.finalContent === undefined ? lastContent : extra.finalContent,
    usage,
    errorMessage: extra.errorMessage ?? null,
  });

  /** One provider call: pre-flight, REQUEST step, call, usage, LLM step. null = budget denied. */
  const call = async (round: number, tools: typeof specs): Promise<Completion | null> => {
    if (signal.aborted) throw new Cancelled();
    const promptText = messages.map((message) => message.content).join('\n');
    const denial = await input.budget.preflight(plannedCost(promptText, settings.maxTokens, input.model));
    if (denial) {
      input.logger.warn({ runId: input.runId, denial }, 'budget pre-flight refused a provider call');
      return null;
    }
    await input.onStep({ kind: 'REQUEST', round, messagesSent: [...messages], offeredTools: tools ? tools.map((spec) => spec.name) : null });
    const started = performance.now();
    const completion = await input.provider.complete({
      model: input.model.providerModelId,
      messages: [...messages],
      tools,
      temperature: settings.temperature,
      maxTokens: settings.maxTokens,
      signal,
    });
    const priced = priceUsage(completion.usage, input.model);
    usage = addUsage(usage, priced);
    await input.budget.record(priced);
    await input.onStep({
      kind: 'LLM',
      round,
      content: completion.content,
      thinking: completion.thinking ?? null,
      requestedToolCalls: completion.toolCalls,
      usage: priced,
      finishReason: completion.finishReason,
      durationMs: performance.now() - started,
    });
    lastContent = completion.content;
    return completion;
  };

  try {
    if (specs === null) {
      const completion = await call(1, null);
      if (!completion) return finish('FAILED', 'BUDGET_EXHAUSTED', { errorMessage: 'The budget does not allow another provider call.' });
      iterations = 1;
      return finish('COMPLETED', 'COMPLETED', { finalContent: completion.content });
    }
    for (let round = 1; round <= settings.maxIterations; round++) {
      const completion = await call(round, specs);
      if (!completion) {
        return iterations === 0
          ? finish('FAILED', 'BUDGET_EXHAUSTED', { errorMessage: 'The budget does not allow another provider call.' })
          : finish('COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
      }
      iterations = round;
      if (completion.toolCalls.length === 0) return finish('COMPLETED', 'COMPLETED', { finalContent: completion.content });
      messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
      await runToolCalls(input, round, completion.toolCalls, messages);
    }
    // The cap was reached with tool results pending: one plain completion, WITHOUT tools, answers.
    const synthesis = await call(settings.maxIterations + 1, null);
    if (!synthesis) return finish('COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
    return finish('COMPLETED', 'MAX_ITERATIONS', { truncated: true, finalContent: synthesis.content });
  } catch (error) {
    if (error instanceof Cancelled || signal.aborted) return finish('CANCELLED', 'CANCELLED');
    if (error instanceof ProviderError) {
      input.logger.error({ err: error, runId: input.runId, status: error.status, kind: error.kind }, 'provider call failed');
      return finish('FAILED', 'PROVIDER_FAILED', { errorMessage: 'The model provider failed to answer; see the server log.' });
    }
    throw error;
  }
}

/** Runs one turn's calls concurrently; appends their results (content only) in call order. */
async function runToolCalls(input: LoopInput, round: number, calls: readonly ToolCall[], messages: ChatMessage[]): Promise<void> {
  if (input.signal.aborted) throw new Cancelled();
  const outcomes = await Promise.all(
    calls.map((call) =>
      invokeTool(call, {
        gate: input.gate,
        logger: input.logger,
        quarantine: input.settings.quarantineToolOutput,
        ...(input.settings.toolTimeoutMs === undefined ? {} : { timeoutMs: input.settings.toolTimeoutMs }),
        context: { actor: input.gate.actor, signal: input.signal, runId: input.runId, data: input.toolData },
      }),
    ),
  );
  for (const [index, call] of calls.entries()) {
    const outcome = outcomes[index]!;
    messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: outcome.content, isError: outcome.isError });
    await input.onStep({
      kind: 'TOOL',
      round,
      toolCallId: call.id,
      toolName: call.name,
      toolArguments: call.arguments,
      toolResult: outcome.content,
      toolIsError: outcome.isError,
      artifacts: outcome.artifacts,
      durationMs: outcome.durationMs,
    });
  }
  if (input.signal.aborted) throw new Cancelled();
}

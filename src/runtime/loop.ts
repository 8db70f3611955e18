import { SpanKind } from '@opentelemetry/api';
import { decide, offeredTools, type GateInput } from '../access/gate.ts';
import { isValidUsage, ProviderError, uniqueCallIds, type ChatMessage, type Completion, type LlmProvider, type ToolCall } from './llm.ts';
import type { TruncationMode } from '../tools/bounds.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolLogger, ToolSpec } from '../tools/tool.ts';
import { suspensionFor, type ApprovalDecision, type LoopState, type Suspension } from './approval.ts';
import type { BudgetDenial } from './budget.ts';
import { invokeTool } from './invoke.ts';
import type { RunOutcome, RunStep, TerminationReason } from './run.ts';
import { inSpan, NO_OBSERVER, NO_SPAN_CONTENT, setDefined, type LoopObserver, type SpanContent } from './telemetry.ts';
import { addUsage, plannedCost, priceUsage, ZERO_USAGE, type ModelPrices, type PricedUsage } from './usage.ts';

/** Where budget pre-flight and usage accounting live (the database, in the service). */
export interface BudgetGuard {
  /**
   * The first budget that refuses a call of this planned cost, or null, in which case the call is
   * RESERVED (counted against every budget at once, so concurrent runs cannot all pass the same
   * check) until `record` replaces the plan with the real usage.
   */
  preflight(plannedCost: number): Promise<BudgetDenial | null>;
  /**
   * Records one provider call's usage (every call, the synthesis included). It may only queue the
   * write: a failure to store it must then surface at the next pre-flight, which throws.
   */
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
  /** How tool content over the byte cap is cut. Absent (a run suspended before the option existed) = `HEAD`. */
  readonly truncation?: TruncationMode;
  /** Per tool call (default 30 s). */
  readonly toolTimeoutMs?: number;
  /** Calls of remote (`untrusted`) tools one run may make; later ones are refused. Absent = 20. */
  readonly maxRemoteToolCalls?: number;
}

export const DEFAULT_MAX_REMOTE_TOOL_CALLS = 20;

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
  /** Metrics of provider calls, tool calls and budget denials (default: none). */
  readonly observer?: LoopObserver;
  /** What spans may carry of content (default: nothing; see `spanContentFor`). */
  readonly spanContent?: SpanContent;
}

class Cancelled extends Error {}

/** The mutable progress of one run, shared by the first pass and every resume. */
interface Session {
  readonly input: LoopInput;
  readonly specs: ToolSpec[] | null;
  messages: ChatMessage[];
  usage: PricedUsage;
  iterations: number;
  lastContent: string | null;
  deniedTurns: number;
  remoteToolCalls: number;
}

/**
 * The bounded agent loop of DESIGN.md section 5. Plain async function: no GraphQL, no SQL; steps go
 * to `onStep`, the store and the stream are the caller's business. A turn that calls an offered
 * write tool suspends BEFORE any call of the turn runs (status WAITING_FOR_APPROVAL); `resumeLoop`
 * continues it once a person decided.
 */
export async function runLoop(input: LoopInput): Promise<RunOutcome> {
  const messages: ChatMessage[] = [];
  if (input.settings.systemPrompt.trim() !== '') messages.push({ role: 'system', content: input.settings.systemPrompt });
  messages.push({ role: 'user', content: input.prompt });
  const session = openSession(input, { messages, iterations: 0, usage: ZERO_USAGE, lastContent: null, deniedTurns: 0 });
  return guarded(session, () => (session.specs === null ? plainAnswer(session) : rounds(session, 1)));
}

/**
 * Continues a suspended run: the pending calls run (approved) or are refused (denied), every call
 * re-checked against the CURRENT switches, then the loop goes on with its counters and usage.
 * A run with a denied turn that the model then answers around ends `COMPLETED` with the reason
 * `APPROVAL_DENIED` (a reason that says why it stopped, budget or cap, wins over it).
 */
export async function resumeLoop(input: LoopInput, suspension: Suspension, decision: ApprovalDecision): Promise<RunOutcome> {
  const session = openSession(input, suspension.state);
  if (!decision.approved) session.deniedTurns += 1;
  return guarded(session, async () => {
    await runToolCalls(session, suspension.round, suspension.calls, decision.approved ? 'approved' : 'denied');
    return suspension.round >= input.settings.maxIterations ? synthesise(session) : rounds(session, suspension.round + 1);
  });
}

function openSession(input: LoopInput, state: LoopState): Session {
  const offered = offeredTools(input.gate).map((tool) => tool.name);
  return {
    input,
    specs: offered.length > 0 ? input.registry.specs(offered) : null,
    messages: [...state.messages],
    usage: state.usage,
    iterations: state.iterations,
    lastContent: state.lastContent,
    deniedTurns: state.deniedTurns ?? 0,
    remoteToolCalls: state.remoteToolCalls ?? 0,
  };
}

function finish(
  session: Session,
  status: RunOutcome['status'],
  terminationReason: TerminationReason | null,
  extra: { truncated?: boolean; finalContent?: string | null; errorMessage?: string | null; suspension?: Suspension } = {},
): RunOutcome {
  return {
    status,
    terminationReason: terminationReason === 'COMPLETED' && session.deniedTurns > 0 ? 'APPROVAL_DENIED' : terminationReason,
    truncated: extra.truncated ?? false,
    iterations: session.iterations,
    finalContent: extra.finalContent === undefined ? session.lastContent : extra.finalContent,
    usage: session.usage,
    errorMessage: extra.errorMessage ?? null,
    ...(extra.suspension ? { suspension: extra.suspension } : {}),
  };
}

const BUDGET_DENIED = 'The budget does not allow another provider call.';

/** Maps cancellation and provider failures to their outcomes; anything else is a bug and propagates. */
async function guarded(session: Session, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const { input } = session;
  try {
    return await body();
  } catch (error) {
    if (error instanceof Cancelled || input.signal.aborted) return finish(session, 'CANCELLED', 'CANCELLED');
    if (error instanceof ProviderError) {
      input.logger.error({ err: error, runId: input.runId, status: error.status, kind: error.kind }, 'provider call failed');
      return finish(session, 'FAILED', 'PROVIDER_FAILED', { errorMessage: 'The model provider failed to answer; see the server log.' });
    }
    throw error;
  }
}

/** No tools offered: ONE plain completion, with no tools field on the wire. */
async function plainAnswer(session: Session): Promise<RunOutcome> {
  const completion = await callProvider(session, 1, null);
  if (!completion) return finish(session, 'FAILED', 'BUDGET_EXHAUSTED', { errorMessage: BUDGET_DENIED });
  session.iterations = 1;
  return finish(session, 'COMPLETED', 'COMPLETED', { finalContent: completion.content });
}

async function rounds(session: Session, firstRound: number): Promise<RunOutcome> {
  const { input } = session;
  for (let round = firstRound; round <= input.settings.maxIterations; round++) {
    const completion = await callProvider(session, round, session.specs);
    if (!completion) {
      return session.iterations === 0
        ? finish(session, 'FAILED', 'BUDGET_EXHAUSTED', { errorMessage: BUDGET_DENIED })
        : finish(session, 'COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
    }
    session.iterations = round;
    if (completion.toolCalls.length === 0) return finish(session, 'COMPLETED', 'COMPLETED', { finalContent: completion.content });
    session.messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
    const state = {
      messages: [...session.messages],
      iterations: session.iterations,
      usage: session.usage,
      lastContent: session.lastContent,
      deniedTurns: session.deniedTurns,
      remoteToolCalls: session.remoteToolCalls,
    };
    const suspension = await suspensionFor(input, state, round, completion.toolCalls);
    if (suspension) return finish(session, 'WAITING_FOR_APPROVAL', null, { suspension });
    await runToolCalls(session, round, completion.toolCalls, 'run');
  }
  return synthesise(session);
}

/** The cap was reached with tool results pending: one plain completion, WITHOUT tools, answers. */
async function synthesise(session: Session): Promise<RunOutcome> {
  const synthesis = await callProvider(session, session.input.settings.maxIterations + 1, null);
  if (!synthesis) return finish(session, 'COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
  return finish(session, 'COMPLETED', 'MAX_ITERATIONS', { truncated: true, finalContent: synthesis.content });
}

/** One provider call: pre-flight, REQUEST step, call, usage, LLM step. null = budget denied. */
async function callProvider(session: Session, round: number, tools: ToolSpec[] | null): Promise<Completion | null> {
  const { input } = session;
  const { settings, signal } = input;
  if (signal.aborted) throw new Cancelled();
  const promptText = session.messages.map((message) => message.content).join('\n');
  const denial = await input.budget.preflight(plannedCost(promptText, settings.maxTokens, input.model));
  const observer = input.observer ?? NO_OBSERVER;
  if (denial) {
    input.logger.warn({ runId: input.runId, denial }, 'budget pre-flight refused a provider call');
    observer.budgetDenied(denial);
    return null;
  }
  await input.onStep({ kind: 'REQUEST', round, messagesSent: [...session.messages], offeredTools: tools ? tools.map((spec) => spec.name) : null });
  if (tools) observer.toolsOffered(tools.map((spec) => spec.name));
  const started = performance.now();
  const spanContent = input.spanContent ?? NO_SPAN_CONTENT;
  const { kind: provider } = input.provider;
  /** The kind as a bounded, lower-case name (`openai`, `anthropic`, …) for spans and metrics. */
  const providerName = provider.toLowerCase();
  // GenAI semantic conventions: one CLIENT span per provider call, named `chat <model>`.
  const completion = await inSpan(
    `chat ${input.model.providerModelId}`,
    { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': providerName, 'gen_ai.request.model': input.model.providerModelId, 'airlock.round': round },
    async (span) => {
      setDefined(span, { 'gen_ai.input.messages': spanContent(session.messages) });
      try {
        const answer = await input.provider.complete({
          model: input.model.providerModelId,
          messages: [...session.messages],
          tools,
          temperature: settings.temperature,
          maxTokens: settings.maxTokens,
          signal,
        });
        // The provider boundary: numbers and ids from outside are checked before anything uses them.
        if (!isValidUsage(answer.usage)) {
          input.logger.error({ runId: input.runId, provider, usage: answer.usage }, 'provider reported invalid token counts');
          throw new ProviderError(provider, 'malformed');
        }
        const checked: Completion = { ...answer, toolCalls: uniqueCallIds(answer.toolCalls) };
        setDefined(span, {
          'gen_ai.usage.input_tokens': checked.usage.promptTokens,
          'gen_ai.usage.output_tokens': checked.usage.completionTokens,
          'gen_ai.response.finish_reasons': [checked.finishReason],
          'airlock.tool_calls': checked.toolCalls.length,
          'gen_ai.output.messages': spanContent({ content: checked.content, toolCalls: checked.toolCalls }),
        });
        return checked;
      } catch (error) {
        if (error instanceof ProviderError) span.setAttribute('error.type', error.kind);
        observer.providerCall({ provider: providerName, durationMs: performance.now() - started, outcome: 'error' });
        throw error;
      }
    },
    SpanKind.CLIENT,
  );
  const priced = priceUsage(completion.usage, input.model);
  observer.providerCall({ provider: providerName, durationMs: performance.now() - started, outcome: 'ok', usage: priced });
  session.usage = addUsage(session.usage, priced);
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
  session.lastContent = completion.content;
  return completion;
}

type CallMode = 'run' | 'approved' | 'denied';

/**
 * Runs one turn's calls concurrently; appends their results (content only) in call order. After an
 * approval every call is re-checked against the current switches first; after a denial none runs.
 * Every call, refusals included, passes the one seam that bounds what the model receives.
 */
async function runToolCalls(session: Session, round: number, calls: readonly ToolCall[], mode: CallMode): Promise<void> {
  const { input } = session;
  if (input.signal.aborted) throw new Cancelled();
  const budget = input.settings.maxRemoteToolCalls ?? DEFAULT_MAX_REMOTE_TOOL_CALLS;
  // Counted in call order before the turn runs concurrently: the first calls within budget run.
  const spent = calls.map((call) => {
    if (mode === 'denied') return false;
    const decision = decide(input.gate, call.name);
    if (!decision.allowed || decision.tool.untrusted !== true) return false;
    if (session.remoteToolCalls >= budget) return true;
    session.remoteToolCalls += 1;
    return false;
  });
  const outcomes = await Promise.all(
    calls.map((call, index) =>
      invokeTool(call, {
        remoteBudgetSpent: spent[index]!,
        gate: input.gate,
        logger: input.logger,
        quarantine: input.settings.quarantineToolOutput,
        truncation: input.settings.truncation,
        ...(input.settings.toolTimeoutMs === undefined ? {} : { timeoutMs: input.settings.toolTimeoutMs }),
        ...(mode === 'run' ? {} : { approval: mode }),
        ...(input.observer ? { observer: input.observer } : {}),
        ...(input.spanContent ? { spanContent: input.spanContent } : {}),
        context: { actor: input.gate.actor, signal: input.signal, runId: input.runId, data: input.toolData },
      }),
    ),
  );
  for (const [index, call] of calls.entries()) {
    const outcome = outcomes[index]!;
    session.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: outcome.content, isError: outcome.isError });
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

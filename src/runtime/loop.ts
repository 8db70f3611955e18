import { createHash } from 'node:crypto';
import { decide, deniedByOperatorError, noLongerPermittedError, offeredTools, type GateInput } from '../access/gate.ts';
import { ProviderError, type ChatMessage, type Completion, type LlmProvider, type ToolCall } from './llm.ts';
import { boundToolResult } from '../tools/bounds.ts';
import { ToolResult, type Artifact } from '../tools/result.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tool, ToolLogger, ToolSpec } from '../tools/tool.ts';
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
      readonly kind: 'APPROVAL';
      readonly round: number;
      /** Who decided, when, about which turn: stored BEFORE any approved write runs. */
      readonly approverId: string;
      readonly approverName: string;
      readonly approved: boolean;
      readonly digest: string;
      readonly decidedAt: string;
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
  readonly status: Exclude<RunStatus, 'RUNNING'>;
  readonly terminationReason: TerminationReason | null;
  readonly truncated: boolean;
  /** The loop's provider calls (a direct answer is 1); never counts the synthesis call. */
  readonly iterations: number;
  readonly finalContent: string | null;
  readonly usage: PricedUsage;
  /** Generic, safe to show: details of failures go to the log only. */
  readonly errorMessage: string | null;
  /** Set exactly when status is WAITING_FOR_APPROVAL: what to store to resume later. */
  readonly suspension?: Suspension;
}

/** Where a suspended run stands. Holds message CONTENT only: artifacts never enter a transcript. */
export interface LoopState {
  readonly messages: readonly ChatMessage[];
  readonly iterations: number;
  readonly usage: PricedUsage;
  readonly lastContent: string | null;
}

export interface PendingCallPreview {
  readonly callId: string;
  readonly toolName: string;
  /** Bounded text shown to the approver; failures and empty previews are shown as such. */
  readonly preview: string;
}

/** A turn waiting for a human: its calls (none has run), the write calls' previews, the digest. */
export interface Suspension {
  readonly state: LoopState;
  readonly round: number;
  readonly calls: readonly ToolCall[];
  readonly previews: readonly PendingCallPreview[];
  /** sha256 (hex) of the pending calls' canonical JSON: the approver must name exactly this turn. */
  readonly digest: string;
}

export interface ApprovalDecision {
  readonly approved: boolean;
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
  const session = openSession(input, { messages, iterations: 0, usage: ZERO_USAGE, lastContent: null });
  return guarded(session, () => (session.specs === null ? plainAnswer(session) : rounds(session, 1)));
}

/**
 * Continues a suspended run: the pending calls run (approved) or are refused (denied), every call
 * re-checked against the CURRENT switches, then the loop goes on with its counters and usage.
 */
export async function resumeLoop(input: LoopInput, suspension: Suspension, decision: ApprovalDecision): Promise<RunOutcome> {
  const session = openSession(input, suspension.state);
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
    terminationReason,
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
    const suspension = await suspensionFor(session, round, completion.toolCalls);
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
  if (denial) {
    input.logger.warn({ runId: input.runId, denial }, 'budget pre-flight refused a provider call');
    return null;
  }
  await input.onStep({ kind: 'REQUEST', round, messagesSent: [...session.messages], offeredTools: tools ? tools.map((spec) => spec.name) : null });
  const started = performance.now();
  const completion = await input.provider.complete({
    model: input.model.providerModelId,
    messages: [...session.messages],
    tools,
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    signal,
  });
  const priced = priceUsage(completion.usage, input.model);
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

/** Previews are for people: bounded to 20 lines of 500 characters. */
const PREVIEW_LINES = 20;
const PREVIEW_LINE_CHARS = 500;

export function boundPreview(text: string): string {
  const lines = text.split('\n');
  const kept = lines.slice(0, PREVIEW_LINES).map((line) => ([...line].length > PREVIEW_LINE_CHARS ? `${[...line].slice(0, PREVIEW_LINE_CHARS - 1).join('')}…` : line));
  if (lines.length > PREVIEW_LINES) kept[PREVIEW_LINES - 1] = `… (${lines.length - PREVIEW_LINES + 1} more lines)`;
  return kept.join('\n');
}

/**
 * A turn suspends when ANY of its calls names an OFFERED tool whose effect is `write` (a call to a
 * tool that is not offered never suspends: it is refused as usual). Returns null otherwise.
 */
async function suspensionFor(session: Session, round: number, calls: readonly ToolCall[]): Promise<Suspension | null> {
  const { input } = session;
  const writes = calls.flatMap((call) => {
    const decision = decide(input.gate, call.name);
    return decision.allowed && decision.tool.effect === 'write' ? [{ call, tool: decision.tool }] : [];
  });
  if (writes.length === 0) return null;
  const previews = await Promise.all(
    writes.map(async ({ call, tool }) => ({ callId: call.id, toolName: call.name, preview: boundPreview(await previewOf(input, tool, call)) })),
  );
  return {
    state: { messages: [...session.messages], iterations: session.iterations, usage: session.usage, lastContent: session.lastContent },
    round,
    calls,
    previews,
    digest: turnDigest(calls),
  };
}

async function previewOf(input: LoopInput, tool: Tool, call: ToolCall): Promise<string> {
  if (!tool.preview) return '(this tool offers no preview)';
  const parsed = tool.parameters.safeParse(call.arguments);
  if (!parsed.success) return 'Preview unavailable: the arguments are invalid, so this call will be refused if approved.';
  try {
    const text = await tool.preview(parsed.data, { actor: input.gate.actor, signal: input.signal, runId: input.runId, data: input.toolData, logger: input.logger });
    return text.trim() === '' ? '(the tool returned an empty preview)' : text;
  } catch (error) {
    input.logger.error({ err: error, tool: tool.name, runId: input.runId }, 'tool preview failed');
    return 'Preview failed: the tool could not describe this change.';
  }
}

/** sha256 of the calls' canonical JSON (keys sorted), so any change to the turn changes the digest. */
export function turnDigest(calls: readonly ToolCall[]): string {
  return createHash('sha256')
    .update(canonicalJson(calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }))))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

type CallMode = 'run' | 'approved' | 'denied';

/**
 * Runs one turn's calls concurrently; appends their results (content only) in call order. After an
 * approval every call is re-checked against the current switches first; after a denial none runs.
 */
async function runToolCalls(session: Session, round: number, calls: readonly ToolCall[], mode: CallMode): Promise<void> {
  const { input } = session;
  if (input.signal.aborted) throw new Cancelled();
  const outcomes = await Promise.all(
    calls.map((call): Promise<{ content: string; isError: boolean; artifacts: readonly Artifact[]; durationMs: number }> => {
      if (mode === 'denied') return Promise.resolve(refusal(session, deniedByOperatorError(call.name)));
      if (mode === 'approved' && !decide(input.gate, call.name).allowed) return Promise.resolve(refusal(session, noLongerPermittedError(call.name)));
      return invokeTool(call, {
        gate: input.gate,
        logger: input.logger,
        quarantine: input.settings.quarantineToolOutput,
        ...(input.settings.toolTimeoutMs === undefined ? {} : { timeoutMs: input.settings.toolTimeoutMs }),
        context: { actor: input.gate.actor, signal: input.signal, runId: input.runId, data: input.toolData },
      });
    }),
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

/** Refusals name a tool the model chose, so they pass the same bounding seam as any result. */
function refusal(session: Session, content: string) {
  const bounded = boundToolResult(ToolResult.error(content), { quarantine: session.input.settings.quarantineToolOutput });
  return { content: bounded.content, isError: true, artifacts: [], durationMs: 0 };
}

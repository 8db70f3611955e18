import {
  checkGate,
  deniedByOperatorError,
  gateErrorFor,
  invalidArgumentsError,
  noLongerPermittedError,
  notPermittedError,
  toolFailedError,
  type GateInput,
} from '../access/gate.ts';
import { boundToolResult, type TruncationMode } from '../tools/bounds.ts';
import { ToolResult, type Artifact } from '../tools/result.ts';
import { inSpan, NO_OBSERVER, NO_SPAN_CONTENT, setDefined, type LoopObserver, type SpanContent, type ToolDecision } from './telemetry.ts';
import { TOOL_LOG_ORIGIN, TOOL_LOG_ORIGIN_FIELD, type ToolContext, type ToolLogger } from '../tools/tool.ts';

/** A tool call as the model requested it. `arguments` is the provider's JSON text or a decoded value. */
export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
}

export interface InvokeOptions {
  /** The SAME gate input that computed the offered set: every call is re-checked against it. */
  readonly gate: GateInput;
  /** Everything a tool may touch except the logger, which gets the call's fields added. */
  readonly context: Omit<ToolContext, 'logger'>;
  readonly logger: ToolLogger & { child?(bindings: object): ToolLogger };
  /** Wrap model-facing content in the quarantine envelope (a configuration option). */
  readonly quarantine: boolean;
  /** How content over the byte cap is cut (a configuration option); default `HEAD`. */
  readonly truncation?: TruncationMode;
  /** A call still running after this many milliseconds is abandoned (its signal aborted). Default 30 000. */
  readonly timeoutMs?: number;
  /**
   * A call of a turn a person decided: `denied` is refused without running; `approved` runs only
   * if the gate still allows it (a tool switched off meanwhile is refused as no longer permitted).
   */
  readonly approval?: 'approved' | 'denied';
  /**
   * The run's budget of remote calls is spent: a call of an `untrusted` (remote) tool that the gate
   * allows is refused, not executed, with the generic not-permitted string (the reason is logged).
   */
  readonly remoteBudgetSpent?: boolean;
  /** Learns each call's decision and duration (metrics); default none. */
  readonly observer?: LoopObserver;
  /** What the call's span may carry of arguments and result (default nothing). */
  readonly spanContent?: SpanContent;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** What a call produced, after the one bounding seam. `content` is exactly what the model receives. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
  /** Run-only: streamed to subscribers and stored, never sent to the model. */
  readonly artifacts: readonly Artifact[];
  readonly durationMs: number;
}

/**
 * THE seam every tool call goes through, whatever the loop or resume path, refusals included:
 * operator decision → gate (again) → argument validation → execute (exceptions logged, never shown) → bound + sanitise.
 * It never throws: every failure becomes an error result with one of the exact, generic strings of
 * DESIGN.md section 4, so the model learns nothing about which rule refused it or why a tool broke.
 */
export async function invokeTool(call: ToolCallRequest, options: InvokeOptions): Promise<ToolOutcome> {
  const spanContent = options.spanContent ?? NO_SPAN_CONTENT;
  return inSpan('execute_tool', { 'gen_ai.operation.name': 'execute_tool' }, async (span) => {
    const started = performance.now();
    const { result, decision, tool, untrusted } = await runCall(call, options);
    // What an untrusted tool itself answered (its own error text included) is quarantined whatever the
    // configuration says; the seam's own strings are not the tool's and stay exact.
    const bounded = boundToolResult(result, { quarantine: options.quarantine || untrusted, truncation: options.truncation });
    const outcome: ToolOutcome = {
      content: bounded.content,
      isError: bounded.isError,
      artifacts: bounded.isError ? [] : bounded.artifacts,
      durationMs: performance.now() - started,
    };
    const finalDecision: ToolDecision = decision === 'ok' && outcome.isError ? 'error' : decision;
    // A name the model made up is content (it may carry anything): only a registered name is metadata.
    const name = tool?.name ?? spanContent(call.name);
    if (name !== undefined) span.updateName(`execute_tool ${name}`);
    setDefined(span, {
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': spanContent(call.id),
      'airlock.tool.group': tool?.group,
      'airlock.tool.decision': finalDecision,
      'airlock.tool.is_error': outcome.isError,
      'airlock.tool.duration_ms': outcome.durationMs,
      'gen_ai.tool.call.arguments': spanContent(call.arguments),
      'gen_ai.tool.call.result': spanContent(outcome.content),
    });
    if (outcome.isError) span.setAttribute('error.type', finalDecision);
    (options.observer ?? NO_OBSERVER).toolCall({ tool: tool?.name ?? null, group: tool?.group ?? null, decision: finalDecision, durationMs: outcome.durationMs });
    return outcome;
  });
}

interface CallResult {
  readonly result: ToolResult;
  readonly decision: ToolDecision;
  /** The registered tool the call named, when it names one. */
  readonly tool: { readonly name: string; readonly group: string } | null;
  /** The result is an untrusted (remote) tool's own answer, to be quarantined (not one of the seam's strings). */
  readonly untrusted: boolean;
}

async function runCall(call: ToolCallRequest, options: InvokeOptions): Promise<CallResult> {
  const registered = options.gate.registry.get(call.name);
  const named = registered ? { name: registered.name, group: registered.group } : null;
  const ended = (result: ToolResult, decision: ToolDecision): CallResult => ({ result, decision, tool: named, untrusted: false });
  if (options.approval === 'denied') return ended(ToolResult.error(deniedByOperatorError(call.name)), 'deniedByOperator');
  const decision = checkGate(options.gate, call.name);
  if (!decision.allowed && options.approval === 'approved') return ended(ToolResult.error(noLongerPermittedError(call.name)), 'noLongerPermitted');
  if (!decision.allowed) {
    options.logger.warn({ tool: truncate(call.name), reason: decision.reason, runId: options.context.runId }, 'tool call refused by the gate');
    return ended(ToolResult.error(gateErrorFor(decision.reason, call.name)), decision.reason);
  }
  const { tool } = decision;
  if (tool.untrusted === true && options.remoteBudgetSpent) {
    options.logger.warn({ tool: tool.name, runId: options.context.runId }, "tool call refused: the run's budget of remote tool calls is spent");
    return ended(ToolResult.error(notPermittedError(tool.name)), 'remoteBudgetSpent');
  }
  const decoded = decodeArguments(call.arguments);
  const parsed = tool.parameters.safeParse(decoded.ok ? decoded.value : undefined);
  if (!decoded.ok) return ended(ToolResult.error(`Error: invalid arguments for tool "${tool.name}": (root): ${decoded.problem}`), 'invalidArguments');
  if (!parsed.success) return ended(ToolResult.error(invalidArgumentsError(tool.name, parsed.error)), 'invalidArguments');
  const logger = options.logger.child?.({ tool: tool.name, runId: options.context.runId, callId: call.id }) ?? options.logger;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const controller = new AbortController();
  const signal = AbortSignal.any([options.context.signal, controller.signal]);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  // A cancelled run does not wait for a tool that ignores its signal: the call is abandoned. The
  // listener goes on the call's own signal (which the run's aborts), not on the run's: a turn of a
  // dozen calls would put a dozen listeners on one signal, and Node warns of a leak past ten.
  const cancelled = new Promise<'cancelled'>((resolve) => {
    onAbort = () => resolve('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    options.context.signal.throwIfAborted();
    const result: unknown = await Promise.race([tool.execute(parsed.data, { ...options.context, signal, logger: markedAsTool(logger) }), timedOut, cancelled]);
    if (result === 'cancelled') {
      logger.info({ tool: tool.name }, 'tool call abandoned: the run was cancelled');
      return ended(ToolResult.error(toolFailedError(tool.name)), 'cancelled');
    }
    if (result === 'timeout') {
      controller.abort(new Error(`tool timed out after ${timeoutMs} ms`));
      logger.error({ tool: tool.name, timeoutMs }, 'tool execution timed out');
      return ended(ToolResult.error(toolFailedError(tool.name)), 'timedOut');
    }
    if (!(result instanceof ToolResult)) {
      logger.error({ tool: tool.name }, 'tool returned something other than a ToolResult');
      return ended(ToolResult.error(toolFailedError(tool.name)), 'failed');
    }
    return { ...ended(result, 'ok'), untrusted: tool.untrusted === true };
  } catch (error) {
    // The exception may carry credentials (connection strings, upstream bodies): log only.
    logger.error({ err: error, tool: tool.name }, 'tool execution failed');
    return ended(ToolResult.error(toolFailedError(tool.name)), 'failed');
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** What a tool logs through `ctx.logger`, marked as the tool's own (see TOOL_LOG_ORIGIN_FIELD). */
function markedAsTool(logger: ToolLogger): ToolLogger {
  const mark = (obj: unknown): object => {
    if (obj instanceof Error) return { err: obj, [TOOL_LOG_ORIGIN_FIELD]: TOOL_LOG_ORIGIN };
    if (typeof obj === 'object' && obj !== null) return { ...obj, [TOOL_LOG_ORIGIN_FIELD]: TOOL_LOG_ORIGIN };
    return { detail: obj, [TOOL_LOG_ORIGIN_FIELD]: TOOL_LOG_ORIGIN };
  };
  return {
    info: (obj, msg) => logger.info(mark(obj), msg),
    warn: (obj, msg) => logger.warn(mark(obj), msg),
    error: (obj, msg) => logger.error(mark(obj), msg),
  };
}

type Decoded = { ok: true; value: unknown } | { ok: false; problem: string };

/** Providers send arguments as JSON text (OpenAI) or objects (Anthropic, Ollama, Gemini). Empty means `{}`. */
export function decodeArguments(raw: unknown): Decoded {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  if (typeof raw !== 'string') return { ok: true, value: raw };
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false, problem: 'arguments are not valid JSON' };
  }
}

function truncate(name: string): string {
  return name.length > 100 ? `${name.slice(0, 100)}…` : name;
}

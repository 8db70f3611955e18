import type { GateInput } from '../access/gate.ts';
import type { TruncationMode } from '../tools/bounds.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolLogger, ToolSpec } from '../tools/tool.ts';
import type { LoopState } from './approval.ts';
import type { BudgetDenial } from './budget.ts';
import type { ChatMessage, LlmProvider } from './llm.ts';
import type { ResumePoint } from './resume-point.ts';
import type { RunStep } from './run.ts';
import type { LoopObserver, SpanContent } from './telemetry.ts';
import type { ModelPrices, PricedUsage } from './usage.ts';

/**
 * What the agent loop (loop.ts) is given, and what it keeps while it runs: the parts of the loop
 * (provider-call.ts, tool-turn.ts) share these, so they live apart from the loop that drives them.
 */


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
  /**
   * Receives each step in order; awaited, so a slow consumer slows the run rather than losing steps.
   * A durable run (`checkpoint` set) also receives, with each step that reaches one, the point the
   * run can be continued from once that step is stored.
   */
  onStep(step: RunStep, resumeFrom?: ResumePoint): Promise<void> | void;
  /**
   * Durable runs: stores a resume point NOW (after every step before it), before calls that must
   * not run twice; if it throws, they do not run. Absent: the run is not durable.
   */
  checkpoint?(point: ResumePoint): Promise<void>;
  /** Aborted when this process hands the run over: the loop stops at its next step boundary (LoopHandedOver). */
  readonly handover?: AbortSignal;
  /** Metrics of provider calls, tool calls and budget denials (default: none). */
  readonly observer?: LoopObserver;
  /** What spans may carry of content (default: nothing; see `spanContentFor`). */
  readonly spanContent?: SpanContent;
}

/** Calls of remote (`untrusted`) tools one run may make when its settings do not say. */
export const DEFAULT_MAX_REMOTE_TOOL_CALLS = 20;

/** The loop was cancelled (its signal): the run ends CANCELLED. */
export class Cancelled extends Error {}

/**
 * The process hands the run over (`LoopInput.handover`): the loop stopped at a step boundary, with
 * every resume point up to it handed to `onStep`, so another process can continue the run. Thrown
 * out of the loop; the caller settles nothing.
 */
export class LoopHandedOver extends Error {
  constructor() {
    super('the run was handed over at a step boundary');
  }
}

/** The mutable progress of one run, shared by the first pass and every resume. */
export interface Session {
  readonly input: LoopInput;
  readonly specs: ToolSpec[] | null;
  messages: ChatMessage[];
  usage: PricedUsage;
  iterations: number;
  lastContent: string | null;
  deniedTurns: number;
  remoteToolCalls: number;
  /** A resume point was handed over in this pass (the first REQUEST step carries one; later ones need not). */
  pointed: boolean;
}

/** The session's progress as a resume point (and a suspension) stores it: a copy, later pushes do not change it. */
export function stateOf(session: Session): LoopState {
  return {
    messages: [...session.messages],
    iterations: session.iterations,
    usage: session.usage,
    lastContent: session.lastContent,
    deniedTurns: session.deniedTurns,
    remoteToolCalls: session.remoteToolCalls,
  };
}

/** Whether the run is durable: resume points are built only for a caller that stores them. */
export const durable = (session: Session): boolean => session.input.checkpoint !== undefined;

/** At a step boundary: stop for a cancellation, or for a handover. */
export function atBoundary(session: Session): void {
  if (session.input.signal.aborted) throw new Cancelled();
  if (session.input.handover?.aborted) throw new LoopHandedOver();
}

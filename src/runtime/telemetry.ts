import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { DenialReason } from '../access/gate.ts';
import { redact } from '../redaction/redact.ts';
import type { BudgetDenial } from './budget.ts';
import type { PrivacyLevel } from './privacy.ts';
import type { PricedUsage } from './usage.ts';

/**
 * What the loop and the tool seam report to operators, as spans (through `@opentelemetry/api`,
 * a no-op until the composition root installs an SDK) and to a `LoopObserver` (metrics, which the
 * service implements: the runtime imports no metrics library).
 */

/** The tracer's name: the instrumentation scope of every Airlock span. */
export const TRACER_NAME = 'airlock';

export const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * How a tool call ended, one bounded vocabulary for span attributes and metric labels: ran
 * (`ok`, or `error` when the tool itself returned an error result), refused by the gate (its first
 * failing reason), by the operator, or failed at the seam.
 */
export type ToolDecision =
  | 'ok'
  | 'error'
  | 'failed'
  | 'timedOut'
  | 'cancelled'
  | 'invalidArguments'
  | 'deniedByOperator'
  | 'noLongerPermitted'
  /** A remote tool's call refused because the run's budget of remote calls is spent. */
  | 'remoteBudgetSpent'
  | DenialReason;

export interface ProviderCallRecord {
  /** The provider kind (`openai`, `anthropic`, …): a bounded label. */
  readonly provider: string;
  readonly durationMs: number;
  readonly outcome: 'ok' | 'error';
  /** Present when the call answered. */
  readonly usage?: PricedUsage;
}

export interface ToolCallRecord {
  /** The registered tool's name; null when the model named no registered tool (never a label). */
  readonly tool: string | null;
  readonly group: string | null;
  readonly decision: ToolDecision;
  readonly durationMs: number;
}

/** Receives what the loop did; implemented by the metrics of the service. Must not throw. */
export interface LoopObserver {
  /** The registered tools offered to the model by one provider call. */
  toolsOffered(tools: readonly string[]): void;
  providerCall(call: ProviderCallRecord): void;
  toolCall(call: ToolCallRecord): void;
  budgetDenied(denial: BudgetDenial): void;
}

export const NO_OBSERVER: LoopObserver = { toolsOffered() {}, providerCall() {}, toolCall() {}, budgetDenied() {} };

/**
 * What a span may say of content (prompts, completions, tool arguments and results): nothing
 * unless the run's privacy level is FULL, and then only the redacted text (the one catalogue of
 * src/redaction/). API keys and tokens never reach a span: they are not content, and the redactor
 * masks their shapes if a model or tool repeats one.
 */
export type SpanContent = (value: unknown) => string | undefined;

export function spanContentFor(level: PrivacyLevel): SpanContent {
  if (level !== 'FULL') return () => undefined;
  return (value) => {
    if (value === undefined || value === null) return undefined;
    return redact(typeof value === 'string' ? value : JSON.stringify(value) ?? '');
  };
}

export const NO_SPAN_CONTENT: SpanContent = () => undefined;

/** Runs `body` inside a new child span of the active one; the span ends when `body` settles. */
export async function inSpan<T>(name: string, attributes: Attributes, body: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await body(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Sets the attributes whose value is defined (content that the privacy level hides is undefined). */
export function setDefined(span: Span, attributes: Record<string, string | number | boolean | string[] | undefined>): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}

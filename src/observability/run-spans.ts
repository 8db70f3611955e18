import { context, SpanStatusCode, trace, TraceFlags, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import type { RunOutcome, RunStep } from '../runtime/run.ts';
import { tracer } from '../runtime/telemetry.ts';

/**
 * The `airlock.run` span: one per pass of a run on an instance (its start, and each resume after an
 * approval, which links to the trace the run started in through the traceparent stored with it).
 * Its children are the provider calls and tool calls of the loop; the steps and the approval wait
 * are its events. It carries ids, counters and outcomes only — never content.
 */
export interface RunTrace {
  /** The W3C traceparent of this span (stored with a new run); null when tracing is off. */
  readonly traceParent: string | null;
  /** Runs `body` with this span active, so the loop's spans become its children. */
  within<T>(body: () => Promise<T>): Promise<T>;
  step(step: RunStep): void;
  /** The run was parked: the span ends with an `airlock.approval.waiting` event. */
  parked(outcome: RunOutcome, digest: string): void;
  /** No run was stored (refused at start): the span ends marked as refused. */
  refused(): void;
  /** The run settled (or its pass ended otherwise): sets the outcome and ends the span. */
  settled(outcome: Pick<RunOutcome, 'status' | 'terminationReason' | 'iterations' | 'truncated'>): void;
}

export interface RunSpanStart {
  readonly runId: string;
  readonly configurationId: string | null;
  readonly userId: string | null;
  /** The traceparent stored when the run started: a resumed pass links to it. */
  readonly startedIn?: string | null;
  /** A resumed pass: the human decision it continues after. */
  readonly decision?: { readonly approved: boolean; readonly digest: string };
}

export function startRunTrace(start: RunSpanStart): RunTrace {
  const links: Link[] = [];
  const origin = start.startedIn ? parseTraceParent(start.startedIn) : null;
  if (origin) links.push({ context: origin, attributes: { 'airlock.link': 'run.started' } });
  const span: Span = tracer().startSpan(start.decision ? 'airlock.run.resume' : 'airlock.run', {
    links,
    attributes: {
      'airlock.run.id': start.runId,
      ...(start.configurationId ? { 'airlock.configuration.id': start.configurationId } : {}),
      ...(start.userId ? { 'airlock.user.id': start.userId } : {}),
    },
  });
  if (start.decision) span.addEvent('airlock.approval.decided', { 'airlock.approval.approved': start.decision.approved, 'airlock.approval.digest': start.decision.digest });
  let ended = false;
  const end = () => {
    if (ended) return false;
    ended = true;
    return true;
  };
  return {
    traceParent: formatTraceParent(span.spanContext()),
    within: (body) => context.with(trace.setSpan(context.active(), span), body),
    step(step) {
      if (!ended) span.addEvent('airlock.step', { 'airlock.step.kind': step.kind, 'airlock.step.round': step.round });
    },
    parked(outcome, digest) {
      if (!end()) return;
      span.setAttributes({ 'airlock.run.status': outcome.status, 'airlock.run.iterations': outcome.iterations });
      span.addEvent('airlock.approval.waiting', {
        'airlock.approval.digest': digest,
        'airlock.approval.calls': outcome.suspension?.calls.length ?? 0,
      });
      span.end();
    },
    refused() {
      if (!end()) return;
      span.setAttribute('airlock.run.refused', true);
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'refused' });
      span.end();
    },
    settled(outcome) {
      if (!end()) return;
      span.setAttributes({
        'airlock.run.status': outcome.status,
        'airlock.run.termination_reason': outcome.terminationReason ?? 'NONE',
        'airlock.run.iterations': outcome.iterations,
        'airlock.run.truncated': outcome.truncated,
      });
      if (outcome.status === 'FAILED') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.terminationReason ?? 'FAILED' });
      span.end();
    },
  };
}

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-<trace id>-<span id>-<flags>` (W3C Trace Context), or null for the no-op span of an SDK-less process. */
export function formatTraceParent(span: SpanContext): string | null {
  if (!trace.isSpanContextValid(span)) return null;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The span context a stored traceparent names; null for anything else (stored data is outside input). */
export function parseTraceParent(value: string): SpanContext | null {
  const match = TRACE_PARENT.exec(value);
  if (!match) return null;
  const parsed: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(parsed) ? parsed : null;
}

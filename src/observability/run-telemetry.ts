import type { RunRow } from '../db/database.ts';
import type { PrivacyLevel } from '../runtime/privacy.ts';
import type { RunOutcome, RunStep } from '../runtime/run.ts';
import { spanContentFor, type LoopObserver, type SpanContent } from '../runtime/telemetry.ts';
import type { Metrics } from './metrics.ts';
import { startRunTrace, type RunSpanStart } from './run-spans.ts';

/**
 * What one pass of a run (its start, or a resume) reports: its span and its metrics, in one
 * object for the run host, so that its lifecycle code gains a line per event and no more.
 */
export interface RunTelemetry {
  /** Stored with a new run (see RunsTable.trace_parent). */
  readonly traceParent: string | null;
  /** For the loop input: metrics of provider and tool calls, and what spans may say of content. */
  readonly observer: LoopObserver | undefined;
  readonly spanContent: SpanContent;
  within<T>(body: () => Promise<T>): Promise<T>;
  step(step: RunStep): void;
  /** The run row exists (a start, not a resume): counted as started. */
  started(): void;
  /** No run was stored (the per-user cap refused it). */
  refused(): void;
  parked(outcome: RunOutcome, digest: string): void;
  /** The run settled: `createdAt` is the run's start, for its duration. */
  settled(outcome: RunOutcome, createdAt: Date): void;
}

export function observeRun(metrics: Metrics | undefined, start: RunSpanStart & { readonly level: PrivacyLevel }): RunTelemetry {
  const trace = startRunTrace(start);
  if (start.decision) metrics?.approvalWait('decided');
  return {
    traceParent: trace.traceParent,
    observer: metrics && start.configurationId ? metrics.observerFor(start.configurationId) : undefined,
    spanContent: spanContentFor(start.level),
    within: trace.within,
    step: trace.step,
    started: () => start.configurationId && metrics?.runStarted(start.configurationId),
    refused: trace.refused,
    parked(outcome, digest) {
      trace.parked(outcome, digest);
      metrics?.approvalWait('waiting');
    },
    settled(outcome, createdAt) {
      trace.settled(outcome);
      metrics?.runFinished(outcome.status, outcome.terminationReason, (Date.now() - createdAt.getTime()) / 1_000);
    },
  };
}

/** A run settled without a pass (cancelled while waiting, or swept as INTERRUPTED): counted only. */
export function countSettledRun(metrics: Metrics | undefined, run: RunRow): void {
  metrics?.runFinished(run.status, run.termination_reason, ((run.finished_at ?? new Date()).getTime() - run.created_at.getTime()) / 1_000);
}

import type { Artifact } from '../tools/result.ts';
import type { Suspension } from './approval.ts';
import type { ChatMessage, Completion, ToolCall } from './llm.ts';
import type { PricedUsage } from './usage.ts';

/**
 * The run vocabulary (DESIGN.md section 5), declared once: the loop produces it, the privacy filter
 * and the recorder store it, the database types and the GraphQL enums are built from these lists.
 */

export const RUN_STATUSES = ['RUNNING', 'WAITING_FOR_APPROVAL', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** The statuses of a run that has ended (nothing more happens to it). */
export const SETTLED_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['COMPLETED', 'FAILED', 'CANCELLED']);
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
/** What started a run: the agent loop, or an MCP client's session (one TOOL step per call, no provider call). */
export const RUN_KINDS = ['AGENT', 'MCP'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

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
      /**
       * A call that must not run twice was running when its process died: it was not run again, and
       * the model received the interrupted-outcome error (resume-point.ts). Absent otherwise.
       */
      readonly outcomeUnknown?: boolean;
    };

/** The kinds of step, in the order a round produces them (APPROVAL only after a human decision). */
export const STEP_KINDS = ['REQUEST', 'LLM', 'TOOL', 'APPROVAL'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** How a pass of the loop ended (a run waiting for approval ends a pass, not the run). */
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

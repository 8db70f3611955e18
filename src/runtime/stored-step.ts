import { countCharacters } from '../redaction/redact.ts';
import { plainCopy } from './plain-copy.ts';
import type { RunStep, StepKind } from './run.ts';

/**
 * The stored form of a step: a plain JSON-able record, the same shape at every privacy level (the
 * level decides which keys it keeps: privacy.ts). Every length counts characters (Unicode code
 * points), not UTF-16 units.
 */

/** The keys that carry what was said or produced; the levels below FULL never store them verbatim. */
export const CONTENT_KEYS = ['messagesSent', 'content', 'thinking', 'requestedToolCalls', 'toolArguments', 'toolResult', 'toolArtifacts'] as const;
export type ContentKey = (typeof CONTENT_KEYS)[number];

/**
 * A step as stored and as served to non-admin subscribers: a plain JSON-able record. Content keys
 * are present only when the level keeps content; metadata and summaries are there at every level.
 */
export interface StoredStep {
  kind: StepKind;
  round: number;
  /** Wall time of the provider call or tool, in milliseconds; null for REQUEST steps. */
  durationMs: number | null;
  // content keys
  messagesSent?: unknown[];
  content?: string;
  thinking?: string | null;
  requestedToolCalls?: unknown[];
  toolArguments?: unknown;
  toolResult?: string;
  toolArtifacts?: unknown[];
  // metadata (every level)
  toolName?: string;
  toolCallId?: string;
  toolIsError?: boolean;
  /** TOOL: a write interrupted by its process's death, never run again (metadata). */
  outcomeUnknown?: boolean;
  finishReason?: string;
  offeredTools?: string[] | null;
  usage?: { promptTokens: number; completionTokens: number; cost: number };
  /** APPROVAL steps: the human decision (metadata: kept at every level). */
  approval?: { approverId: string; approverName: string; approved: boolean; digest: string; decidedAt: string };
  // summaries (every level), computed from the verbatim content
  /** True unless the content keys hold the verbatim content. */
  contentRedacted: boolean;
  /** LLM: characters of `content`. */
  contentLength?: number;
  /** TOOL: characters of `toolResult`. */
  toolResultLength?: number;
  toolArtifactsCount?: number;
  toolArtifactTypes?: string[];
  /** LLM: the names of the tool calls the model asked for, in order. */
  requestedToolNames?: string[];
  /** REQUEST: how many messages the call sent. */
  messagesSentCount?: number;
}

/**
 * The verbatim stored form of a live step (the FULL copy, and what admins' live stream gets), with
 * every summary computed. The loop's `artifacts` are stored as `toolArtifacts`; REQUEST steps have
 * no duration (`durationMs: null`).
 */
export function toStoredStep(step: RunStep): StoredStep {
  const copy = <T>(value: unknown) => plainCopy(value, 'verbatim') as T;
  switch (step.kind) {
    case 'REQUEST':
      return {
        kind: 'REQUEST',
        round: step.round,
        durationMs: null,
        messagesSent: copy<unknown[]>(step.messagesSent),
        offeredTools: step.offeredTools === null ? null : [...step.offeredTools],
        contentRedacted: false,
        messagesSentCount: step.messagesSent.length,
      };
    case 'LLM':
      return {
        kind: 'LLM',
        round: step.round,
        durationMs: step.durationMs,
        content: step.content,
        thinking: step.thinking,
        requestedToolCalls: copy<unknown[]>(step.requestedToolCalls),
        finishReason: step.finishReason,
        usage: { promptTokens: step.usage.promptTokens, completionTokens: step.usage.completionTokens, cost: step.usage.cost },
        contentRedacted: false,
        contentLength: countCharacters(step.content),
        requestedToolNames: step.requestedToolCalls.map((call) => call.name),
      };
    case 'APPROVAL':
      return {
        kind: 'APPROVAL',
        round: step.round,
        durationMs: null,
        contentRedacted: false,
        approval: { approverId: step.approverId, approverName: step.approverName, approved: step.approved, digest: step.digest, decidedAt: step.decidedAt },
      };
    case 'TOOL':
      return {
        kind: 'TOOL',
        round: step.round,
        durationMs: step.durationMs,
        toolCallId: step.toolCallId,
        toolName: step.toolName,
        toolArguments: copy<unknown>(step.toolArguments),
        toolResult: step.toolResult,
        toolIsError: step.toolIsError,
        ...(step.outcomeUnknown ? { outcomeUnknown: true } : {}),
        toolArtifacts: copy<unknown[]>(step.artifacts),
        contentRedacted: false,
        toolResultLength: countCharacters(step.toolResult),
        toolArtifactsCount: step.artifacts.length,
        toolArtifactTypes: step.artifacts.map((artifact) => artifact.type),
      };
  }
}

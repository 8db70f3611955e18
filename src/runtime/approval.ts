import { createHash } from 'node:crypto';
import { checkGate, type GateInput } from '../access/gate.ts';
import type { Tool, ToolLogger } from '../tools/tool.ts';
import type { ChatMessage, ToolCall } from './llm.ts';
import type { PricedUsage } from './usage.ts';

/**
 * Human approval of write turns (DESIGN.md section 6), the pure part: when a turn must wait, what
 * the approver is shown (bounded previews) and the digest that binds a decision to exactly that
 * turn. Storing, sealing and deciding are the service's (`services/approvals.ts`).
 */

/** Where a suspended run stands. Holds message CONTENT only: artifacts never enter a transcript. */
export interface LoopState {
  readonly messages: readonly ChatMessage[];
  readonly iterations: number;
  readonly usage: PricedUsage;
  readonly lastContent: string | null;
  /** Turns of this run a person denied so far (absent in states sealed before it was counted). */
  readonly deniedTurns?: number;
  /** Calls of remote tools this run made so far (absent in states sealed before they were counted). */
  readonly remoteToolCalls?: number;
}

export interface PendingCallPreview {
  /** Where the call stands in the turn: previews and approver checks bind to it, not to the id. */
  readonly position: number;
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

/** What suspending a turn reads: the gate that offered it, and what a tool's preview may touch. */
export interface ApprovalContext {
  readonly gate: GateInput;
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly toolData: unknown;
  readonly logger: ToolLogger;
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
export async function suspensionFor(input: ApprovalContext, state: LoopState, round: number, calls: readonly ToolCall[]): Promise<Suspension | null> {
  const writes = calls.flatMap((call, position) => {
    const decision = checkGate(input.gate, call.name);
    return decision.allowed && decision.tool.effect === 'write' ? [{ call, position, tool: decision.tool }] : [];
  });
  if (writes.length === 0) return null;
  const previews = await Promise.all(
    writes.map(async ({ call, position, tool }) => ({
      position,
      callId: call.id,
      toolName: call.name,
      preview: boundPreview(await previewOf(input, tool, call)),
    })),
  );
  return {
    state,
    round,
    calls,
    previews,
    digest: turnDigest(calls),
  };
}

async function previewOf(input: ApprovalContext, tool: Tool, call: ToolCall): Promise<string> {
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

/**
 * The call a preview describes: by position in the turn (states sealed before positions were stored
 * fall back to the id, unique within a turn since the provider boundary makes it so).
 */
export function callOfPreview(calls: readonly ToolCall[], preview: Omit<PendingCallPreview, 'position'> & { readonly position?: number }): ToolCall | undefined {
  return preview.position === undefined ? calls.find((call) => call.id === preview.callId) : calls[preview.position];
}

/** sha256 of EVERY call of the turn, in order, as canonical JSON (keys sorted): any change to the turn changes the digest. */
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

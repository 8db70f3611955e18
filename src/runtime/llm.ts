import type { ToolSpec } from '../tools/tool.ts';

/**
 * The port the loop owns and every provider adapter (`src/providers/`) implements: vendor-neutral
 * messages, tool calls and completions. Adapters only speak their vendor's wire: no business rules,
 * no gate, no bounding, no budgets.
 */

/** A tool call the model requested. `arguments` is always a JSON object (never an array). */
export interface ToolCall {
  /** The vendor's id, or a synthesised `call_<index>` when the vendor returns none. */
  readonly id: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls: readonly ToolCall[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly toolName: string; readonly content: string; readonly isError: boolean };

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface CompletionRequest {
  /** The vendor's model id (`providerModelId`). */
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  /**
   * The offered tools. `null` (or empty) means a plain completion: adapters then send NO tools
   * field at all, because an empty tools array makes some providers answer 400.
   */
  readonly tools: readonly ToolSpec[] | null;
  readonly temperature: number | null;
  readonly maxTokens: number | null;
  readonly signal: AbortSignal;
}

export interface Completion {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  readonly finishReason: FinishReason;
  /** Thinking/reasoning text when the vendor returns it separately; never replayed. */
  readonly thinking?: string;
}

export interface LlmProvider {
  readonly kind: string;
  complete(request: CompletionRequest): Promise<Completion>;
}

export const PROVIDER_ERROR_KINDS = ['http', 'timeout', 'malformed', 'network', 'aborted', 'credentials'] as const;
export type ProviderErrorKind = (typeof PROVIDER_ERROR_KINDS)[number];

/**
 * Every way a provider call can fail. The message is generic and never contains the response
 * body (it may echo the prompt or the key); `status` is the HTTP status when there was one.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly status: number | null;
  readonly provider: string;
  constructor(provider: string, kind: ProviderErrorKind, status: number | null = null, options?: { cause?: unknown }) {
    super(describe(provider, kind, status), options);
    this.provider = provider;
    this.kind = kind;
    this.status = status;
  }
}

function describe(provider: string, kind: ProviderErrorKind, status: number | null): string {
  switch (kind) {
    case 'http':
      return `${provider} answered HTTP ${status ?? '?'}`;
    case 'timeout':
      return `${provider} did not answer in time`;
    case 'malformed':
      return `${provider} returned a response that does not match its API`;
    case 'network':
      return `${provider} could not be reached`;
    case 'aborted':
      return `${provider} call was cancelled`;
    case 'credentials':
      return `${provider} has an API key or header value that HTTP cannot carry; set it again`;
  }
}

/** Token counts a provider may report: whole, non-negative and exactly representable. */
export function isValidUsage(usage: Usage): boolean {
  const valid = (count: unknown) => typeof count === 'number' && Number.isSafeInteger(count) && count >= 0;
  return valid(usage.promptTokens) && valid(usage.completionTokens);
}

/**
 * The calls of one turn with ids unique within the turn. Ids are chosen by the model or by a
 * server passing them through, so two calls may share one (or have none): every later duplicate
 * gets `<id>_<n>` (the characters every wire accepts), and our replay answers each id it sent.
 * Returns the same array when the ids are already unique.
 */
export function uniqueCallIds(calls: readonly ToolCall[]): readonly ToolCall[] {
  const ids = new Set(calls.map((call) => call.id));
  if (ids.size === calls.length && !ids.has('')) return calls;
  const seen = new Set<string>();
  return calls.map((call, index) => {
    const base = call.id === '' ? `call_${index}` : call.id;
    let id = base;
    for (let n = 2; seen.has(id); n++) id = `${base}_${n}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

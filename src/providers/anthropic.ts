import { z } from 'zod';
import type { HttpProviderOptions } from './http.ts';
import { httpAdapter } from './http-adapter.ts';
import { alternatingTurns, systemPrompt } from './turns.ts';
import { argumentsObject } from './wire.ts';
import type { ChatMessage, Completion, CompletionRequest, FinishReason, LlmProvider, ToolCall } from '../runtime/llm.ts';

/**
 * Anthropic Messages API (`POST /v1/messages`). The wire differs from OpenAI's in ways that 400
 * when ignored: the system prompt is a top-level field, `max_tokens` is required, roles strictly
 * alternate (so consecutive same-role turns are merged), and every tool result of one assistant
 * turn must arrive together in the next user turn as `tool_result` blocks.
 */

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic has no server-side default for `max_tokens`; this one applies when the configuration sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

type RequestBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

interface RequestTurn {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

const KNOWN_BLOCKS = new Set(['text', 'tool_use', 'thinking']);

const ResponseBlock = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('thinking'), thinking: z.string() }),
  // Other block types (redacted_thinking, server tool blocks, …) are ignored; known ones must be well-formed.
  z.object({ type: z.string().refine((type) => !KNOWN_BLOCKS.has(type)) }),
]);

const MessageResponse = z.object({
  content: z.array(ResponseBlock),
  stop_reason: z.string().nullable(),
  usage: z.object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    // Prompt-cache tokens are counted apart from input_tokens; they are still prompt tokens.
    cache_creation_input_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
  }),
});

export function createAnthropicProvider(options: HttpProviderOptions): LlmProvider {
  return httpAdapter(options, {
    kind: 'anthropic',
    path: () => '/v1/messages',
    headers: (apiKey) => ({ 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
    toBody: toRequestBody,
    response: MessageResponse,
    fromBody: toCompletion,
  });
}

function toRequestBody(request: CompletionRequest): Record<string, unknown> {
  const system = systemPrompt(request.messages);
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: toTurns(request.messages),
  };
  if (system !== '') body.system = system;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  }
  if (request.temperature !== null) body.temperature = request.temperature;
  return body;
}

/** Tool results are `tool_result` blocks of a user turn; empty text blocks never go (Anthropic rejects them). */
function toTurns(messages: readonly ChatMessage[]): RequestTurn[] {
  const turns = alternatingTurns<RequestBlock, 'assistant'>(messages, {
    modelRole: 'assistant',
    text: (text) => ({ type: 'text', text }),
    call: (call) => ({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) }),
    result: (message) => ({
      type: 'tool_result',
      tool_use_id: message.toolCallId,
      content: message.content,
      ...(message.isError ? { is_error: true as const } : {}),
    }),
  });
  return turns.map(({ role, parts }) => ({ role, content: parts }));
}

function toCompletion(response: z.output<typeof MessageResponse>): Completion {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of response.content) {
    if (block.type === 'text' && 'text' in block) texts.push(block.text);
    else if (block.type === 'thinking' && 'thinking' in block) thoughts.push(block.thinking);
    else if (block.type === 'tool_use' && 'input' in block) toolCalls.push({ id: block.id, name: block.name, arguments: block.input });
  }
  const { usage } = response;
  const completion: Completion = {
    content: texts.join(''),
    toolCalls,
    usage: {
      promptTokens: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
      completionTokens: usage.output_tokens,
    },
    finishReason: toFinishReason(response.stop_reason),
  };
  return thoughts.length > 0 ? { ...completion, thinking: thoughts.join('\n\n') } : completion;
}

function toFinishReason(stopReason: string | null): FinishReason {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

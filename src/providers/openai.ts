import { z } from 'zod';
import type { HttpProviderOptions } from './http.ts';
import { httpAdapter } from './http-adapter.ts';
import { functionTools, plainObject } from './wire.ts';
import type { ChatMessage, Completion, CompletionRequest, FinishReason, LlmProvider, ToolCall } from '../runtime/llm.ts';

/**
 * OpenAI-compatible Chat Completions (`POST {baseUrl}/chat/completions`, baseUrl like
 * `https://api.openai.com/v1`): OpenAI, Groq, Mistral, OpenRouter, vLLM, …
 *
 * Wire rules: arguments travel as a JSON *string* both ways; tool results are `tool` messages
 * answering a `tool_call_id` with content only (the wire has no error flag); `tools` is sent only
 * when non-empty and `tool_choice` never (the vendor default, `auto`, is what the loop wants).
 */
export function createOpenAiProvider(options: HttpProviderOptions): LlmProvider {
  return httpAdapter(options, { kind: 'openai', path: () => 'chat/completions', toBody: toWire, response: ResponseSchema, fromBody: fromWire });
}

function toWire(request: CompletionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages.map(toWireMessage) };
  if (request.tools && request.tools.length > 0) {
    body.tools = functionTools(request.tools);
  }
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.maxTokens !== null) body.max_tokens = request.maxTokens;
  return body;
}

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // A turn that only calls tools has no text; the wire says so with null.
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(plainObject(call.arguments) ?? {}) },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

const ToolCallSchema = z.object({
  id: z.string().nullish(),
  function: z.object({
    name: z.string(),
    // A JSON string on this wire; a few compatible servers send the object itself.
    arguments: z.unknown().optional(),
  }),
});

const ResponseSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(ToolCallSchema).nullish(),
          // DeepSeek / vLLM / Qwen say `reasoning_content`; OpenRouter and Groq say `reasoning`.
          reasoning_content: z.string().nullish(),
          reasoning: z.string().nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() })
    .nullish(),
});

function fromWire(response: z.output<typeof ResponseSchema>): Completion {
  const choice = response.choices[0]!;
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => ({
    id: call.id || `call_${index}`,
    name: call.function.name,
    arguments: decodeArguments(call.function.arguments),
  }));
  const thinking = choice.message.reasoning_content || choice.message.reasoning;
  return {
    content: choice.message.content ?? '',
    toolCalls,
    usage: {
      promptTokens: response.usage?.prompt_tokens ?? 0,
      completionTokens: response.usage?.completion_tokens ?? 0,
    },
    finishReason: toolCalls.length > 0 ? 'tool_calls' : mapFinishReason(choice.finish_reason),
    ...(thinking ? { thinking } : {}),
  };
}

/**
 * Arguments that are not a JSON object (unparsable, an array, a scalar, empty) become `{}`. The
 * call itself is kept, because this wire requires every `tool_call_id` to be answered on replay;
 * the loop then validates `{}` against the tool's own schema, so a tool with required parameters
 * refuses it with a precise error the model can correct, and a tool without any runs on defaults.
 */
function decodeArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'string') return plainObject(raw) ?? {};
  try {
    return plainObject(JSON.parse(raw)) ?? {};
  } catch {
    return {};
  }
}

function mapFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

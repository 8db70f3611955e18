import { z } from 'zod';
import type { HttpProviderOptions } from './http.ts';
import { httpAdapter } from './http-adapter.ts';
import { functionTools, plainObject } from './wire.ts';
import type { ChatMessage, Completion, CompletionRequest, FinishReason, LlmProvider, ToolCall } from '../runtime/llm.ts';

/**
 * Ollama's native chat API (`POST {baseUrl}/api/chat`, baseUrl like `http://localhost:11434`),
 * non-streaming.
 *
 * Wire rules: arguments travel as JSON *objects*; Ollama returns no call ids, so they are
 * synthesised as `call_<index>` (index of the raw entry) and dropped again on replay, where a tool
 * result is matched by `tool_name` and position instead. Malformed calls are skipped. `done_reason`
 * is `stop` even when the model called tools, so the presence of calls decides `tool_calls`.
 */
export function createOllamaProvider(options: HttpProviderOptions): LlmProvider {
  return httpAdapter(options, { kind: 'ollama', path: () => 'api/chat', toBody: toWire, response: ResponseSchema, fromBody: fromWire });
}

function toWire(request: CompletionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages.map(toWireMessage), stream: false };
  if (request.tools && request.tools.length > 0) {
    body.tools = functionTools(request.tools);
  }
  const modelOptions: Record<string, number> = {};
  if (request.temperature !== null) modelOptions.temperature = request.temperature;
  // Ollama's name for the output-token cap.
  if (request.maxTokens !== null) modelOptions.num_predict = request.maxTokens;
  if (Object.keys(modelOptions).length > 0) body.options = modelOptions;
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
        content: message.content,
        tool_calls: message.toolCalls.map((call) => ({
          function: { name: call.name, arguments: plainObject(call.arguments) ?? {} },
        })),
      };
    case 'tool':
      // No `tool_call_id` on this wire (our ids are synthesised, Ollama never saw them).
      return { role: 'tool', content: message.content, tool_name: message.toolName };
  }
}

const ResponseSchema = z.object({
  message: z.object({
    content: z.string().nullish(),
    thinking: z.string().nullish(),
    // Entries are checked one by one so a malformed call is skipped, not the whole answer.
    tool_calls: z.array(z.unknown()).nullish(),
  }),
  done_reason: z.string().nullish(),
  prompt_eval_count: z.number().nullish(),
  eval_count: z.number().nullish(),
});

const ToolCallSchema = z.object({
  function: z.object({ name: z.string().min(1), arguments: z.unknown().optional() }),
});

function fromWire(response: z.output<typeof ResponseSchema>): Completion {
  const toolCalls: ToolCall[] = [];
  (response.message.tool_calls ?? []).forEach((entry, index) => {
    const parsed = ToolCallSchema.safeParse(entry);
    if (!parsed.success) return;
    const args = decodeArguments(parsed.data.function.arguments);
    if (!args) return;
    // Counting raw entries keeps an id stable whichever of its neighbours were skipped.
    toolCalls.push({ id: `call_${index}`, name: parsed.data.function.name, arguments: args });
  });
  const thinking = response.message.thinking;
  return {
    content: response.message.content ?? '',
    toolCalls,
    usage: { promptTokens: response.prompt_eval_count ?? 0, completionTokens: response.eval_count ?? 0 },
    finishReason: toolCalls.length > 0 ? 'tool_calls' : mapDoneReason(response.done_reason),
    ...(thinking ? { thinking } : {}),
  };
}

/**
 * Arguments arrive as an object, or (from some models/templates) as a JSON string of one. Absent or
 * blank means no arguments (`{}`); anything else that is not an object marks the call malformed.
 */
function decodeArguments(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'string') return plainObject(raw);
  if (raw.trim() === '') return {};
  try {
    return plainObject(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

function mapDoneReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    default:
      return 'other';
  }
}

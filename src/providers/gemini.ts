import { z } from 'zod';
import type { HttpProviderOptions } from './http.ts';
import { httpAdapter } from './http-adapter.ts';
import { alternatingTurns, systemPrompt, type Turn } from './turns.ts';
import { argumentsObject, isPlainObject } from './wire.ts';
import type { ChatMessage, Completion, CompletionRequest, FinishReason, LlmProvider, ToolCall } from '../runtime/llm.ts';

/**
 * Google Gemini API (`POST /v1beta/models/{model}:generateContent`). The key travels in the
 * `x-goog-api-key` header, never in the URL (`?key=` would land in access logs). Roles are `user`
 * and `model`; tool results are `functionResponse` parts of a user turn, matched to their call by
 * function NAME and position (Gemini returns no call ids, so ids are synthesised `call_<index>`).
 */

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

type Part =
  | { text: string }
  | { functionCall: { name: string; args: Record<string, unknown> } }
  | { functionResponse: { name: string; response: { content: string; is_error?: true } } };

const ResponsePart = z.object({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()).optional() }).optional(),
});

const GenerateContentResponse = z
  .object({
    candidates: z
      .array(
        z.object({
          content: z.object({ parts: z.array(ResponsePart).optional() }).optional(),
          finishReason: z.string().optional(),
        }),
      )
      .optional(),
    // Present instead of candidates when the prompt itself was blocked.
    promptFeedback: z.object({ blockReason: z.string().optional() }).optional(),
    usageMetadata: z
      .object({
        promptTokenCount: z.number().optional(),
        candidatesTokenCount: z.number().optional(),
        // Thinking models bill thoughts as output but count them apart from candidates.
        thoughtsTokenCount: z.number().optional(),
      })
      .optional(),
  })
  // A body with neither candidates nor prompt feedback is not a generateContent answer.
  .refine((body) => body.candidates !== undefined || body.promptFeedback !== undefined);

export function createGeminiProvider(options: HttpProviderOptions): LlmProvider {
  return httpAdapter(options, {
    kind: 'gemini',
    path: (request) => `/v1beta/models/${encodeURIComponent(request.model.replace(/^models\//, ''))}:generateContent`,
    headers: (apiKey): Record<string, string> => (apiKey ? { 'x-goog-api-key': apiKey } : {}),
    toBody: toRequestBody,
    response: GenerateContentResponse,
    fromBody: toCompletion,
  });
}

function toRequestBody(request: CompletionRequest): Record<string, unknown> {
  const system = systemPrompt(request.messages);
  const body: Record<string, unknown> = { contents: toContents(request.messages) };
  if (system !== '') body.systemInstruction = { parts: [{ text: system }] };
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parameters: toGeminiSchema(tool.parameters),
        })),
      },
    ];
  }
  const generationConfig: Record<string, number> = {};
  if (request.temperature !== null) generationConfig.temperature = request.temperature;
  if (request.maxTokens !== null) generationConfig.maxOutputTokens = request.maxTokens;
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

/** Function responses are parts of a user turn, one per call, matched by name and position. */
function toContents(messages: readonly ChatMessage[]): Turn<'user' | 'model', Part>[] {
  return alternatingTurns<Part, 'model'>(messages, {
    modelRole: 'model',
    text: (text) => ({ text }),
    call: (call) => ({ functionCall: { name: call.name, args: argumentsObject(call.arguments) } }),
    result: (message) => ({
      functionResponse: {
        name: message.toolName,
        response: { content: message.content, ...(message.isError ? { is_error: true as const } : {}) },
      },
    }),
  });
}

/** Keywords Gemini's `parameters` (an OpenAPI 3.0 Schema subset) answers 400 for. */
const REJECTED_KEYWORDS = new Set(['$schema', 'additionalProperties']);
/** Keywords whose value is a map of name → subschema. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties']);
/** Keywords whose value is a subschema or a list of subschemas. */
const SUBSCHEMAS = new Set(['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'not']);

/**
 * Drops the JSON Schema keywords Gemini rejects (`$schema`, `additionalProperties`) at every
 * schema position. It walks the schema structure rather than every key, so a PROPERTY named
 * `additionalProperties` and values under `enum`/`default`/`example` are kept. `$ref` is NOT
 * resolved (Gemini cannot follow it): tools whose schemas need references must inline them.
 */
export function toGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const cleaned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (REJECTED_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isPlainObject(value)) {
      cleaned[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, cleanSubschema(sub)]));
    } else if (SUBSCHEMAS.has(key)) {
      cleaned[key] = Array.isArray(value) ? value.map(cleanSubschema) : cleanSubschema(value);
    } else {
      cleaned[key] = value;
    }
  }
  return cleaned;
}

function cleanSubschema(value: unknown): unknown {
  return isPlainObject(value) ? toGeminiSchema(value) : value;
}

function toCompletion(response: z.output<typeof GenerateContentResponse>): Completion {
  const usage = {
    promptTokens: response.usageMetadata?.promptTokenCount ?? 0,
    completionTokens: (response.usageMetadata?.candidatesTokenCount ?? 0) + (response.usageMetadata?.thoughtsTokenCount ?? 0),
  };
  const candidate = response.candidates?.[0];
  // No candidate at all: the prompt was blocked before generation.
  if (!candidate) return { content: '', toolCalls: [], usage, finishReason: 'content_filter' };
  const texts: string[] = [];
  const thoughts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall) {
      toolCalls.push({ id: `call_${toolCalls.length}`, name: part.functionCall.name, arguments: part.functionCall.args ?? {} });
    } else if (part.text !== undefined) {
      (part.thought ? thoughts : texts).push(part.text);
    }
  }
  const completion: Completion = {
    content: texts.join(''),
    toolCalls,
    usage,
    finishReason: toFinishReason(candidate.finishReason, toolCalls.length > 0),
  };
  return thoughts.length > 0 ? { ...completion, thinking: thoughts.join('') } : completion;
}

/** Gemini says `STOP` after function calls too; the calls themselves decide `tool_calls`. */
function toFinishReason(finishReason: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (finishReason) {
    case 'STOP':
      return hasToolCalls ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      return 'other';
  }
}

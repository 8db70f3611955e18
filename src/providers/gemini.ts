import { z } from 'zod';
import { postJson, type HttpProviderOptions } from './http.ts';
import { argumentsObject, isPlainObject } from './wire.ts';
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  FinishReason,
  LlmProvider,
  ToolCall,
} from '../runtime/llm.ts';

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

interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

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
  const headers: Record<string, string> = options.apiKey ? { 'x-goog-api-key': options.apiKey } : {};
  return {
    kind: 'gemini',
    async complete(request) {
      const model = encodeURIComponent(request.model.replace(/^models\//, ''));
      const response = await postJson(
        'gemini',
        options,
        `/v1beta/models/${model}:generateContent`,
        headers,
        toRequestBody(request),
        GenerateContentResponse,
        request.signal,
      );
      return toCompletion(response);
    },
  };
}

function toRequestBody(request: CompletionRequest): Record<string, unknown> {
  const system = request.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .filter((content) => content !== '')
    .join('\n\n');
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

/**
 * Maps neutral messages to `contents`. Consecutive same-role turns merge, so all function
 * responses of one model turn arrive together in one user turn, in call order (Gemini expects as
 * many responses as calls). Empty text parts and empty turns are dropped: Gemini rejects both.
 */
function toContents(messages: readonly ChatMessage[]): Content[] {
  const contents: Content[] = [];
  const append = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        append('user', message.content === '' ? [] : [{ text: message.content }]);
        break;
      case 'assistant':
        append('model', [
          ...(message.content === '' ? [] : [{ text: message.content }]),
          ...message.toolCalls.map((call) => ({ functionCall: { name: call.name, args: argumentsObject(call.arguments) } })),
        ]);
        break;
      case 'tool':
        append('user', [
          {
            functionResponse: {
              name: message.toolName,
              response: { content: message.content, ...(message.isError ? { is_error: true as const } : {}) },
            },
          },
        ]);
        break;
    }
  }
  return contents;
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

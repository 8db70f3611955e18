import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGeminiProvider, toGeminiSchema } from '../../src/providers/gemini.ts';
import type { ChatMessage, CompletionRequest } from '../../src/runtime/llm.ts';
import type { ToolSpec } from '../../src/tools/tool.ts';
import { startFakeServer, type FakeServer } from '../fixtures/wires/fake-server.ts';
import { encodeGemini } from '../fixtures/wires/gemini.ts';

const KEY = 'AIza-test-CANARY';

let server: FakeServer;
beforeAll(async () => {
  server = await startFakeServer(encodeGemini);
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const provider = () => createGeminiProvider({ baseUrl: server.url, apiKey: KEY, timeoutMs: 5_000 });

function request(messages: ChatMessage[], overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return { model: 'gemini-test', messages, tools: null, temperature: null, maxTokens: null, signal: new AbortController().signal, ...overrides };
}

const hello: ChatMessage[] = [{ role: 'user', content: 'Hi' }];

/** A raw generateContent response with one candidate. */
function rawCandidate(parts: unknown[], finishReason = 'STOP'): string {
  return JSON.stringify({
    candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 },
    modelVersion: 'gemini-test',
  });
}

describe('Gemini adapter', () => {
  it('should send the key in the x-goog-api-key header and never in the URL', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request(hello));
    const sent = server.requests[0]!;
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.path).not.toContain('key=');
    expect(sent.path).not.toContain('CANARY');
  });

  it('should post to the generateContent path of the model', async () => {
    server.enqueue({ reply: { content: 'ok' } }, { reply: { content: 'ok' } });
    await provider().complete(request(hello, { model: 'gemini-2.5-flash' }));
    await provider().complete(request(hello, { model: 'models/gemini-2.5-pro' }));
    expect(server.requests.map((sent) => sent.path)).toEqual([
      '/v1beta/models/gemini-2.5-flash:generateContent',
      '/v1beta/models/gemini-2.5-pro:generateContent',
    ]);
  });

  it('should send the system prompt as systemInstruction and only user/model roles in contents', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(
      request([
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.', toolCalls: [] },
        { role: 'user', content: 'Count.' },
      ]),
    );
    const { body } = server.requests[0]!;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be terse.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello.' }] },
      { role: 'user', parts: [{ text: 'Count.' }] },
    ]);
  });

  it('should omit systemInstruction, tools and generationConfig when there are none', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request(hello, { tools: [] }));
    expect(Object.keys(server.requests[0]!.body)).toEqual(['contents']);
  });

  it('should send only the generation settings that are set', async () => {
    server.enqueue({ reply: { content: 'ok' } }, { reply: { content: 'ok' } });
    await provider().complete(request(hello, { temperature: 0 }));
    await provider().complete(request(hello, { temperature: 0.4, maxTokens: 128 }));
    expect(server.requests[0]!.body.generationConfig).toEqual({ temperature: 0 });
    expect(server.requests[1]!.body.generationConfig).toEqual({ temperature: 0.4, maxOutputTokens: 128 });
  });

  it('should replay calls as functionCall parts and group their results, named, in one user turn', async () => {
    server.enqueue({ reply: { content: 'done' } });
    await provider().complete(
      request([
        { role: 'user', content: 'Read a, then list tables' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'call_0', name: 'read_records', arguments: { table: 'a' } },
            { id: 'call_1', name: 'describe_tables', arguments: {} },
          ],
        },
        { role: 'tool', toolCallId: 'call_0', toolName: 'read_records', content: 'rows of a', isError: false },
        { role: 'tool', toolCallId: 'call_1', toolName: 'describe_tables', content: 'Error: failed.', isError: true },
      ]),
    );
    const { body, raw } = server.requests[0]!;
    expect(body.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { name: 'read_records', args: { table: 'a' } } }, { functionCall: { name: 'describe_tables', args: {} } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read_records', response: { content: 'rows of a' } } },
          { functionResponse: { name: 'describe_tables', response: { content: 'Error: failed.', is_error: true } } },
        ],
      },
    ]);
    expect(raw).not.toContain('call_0');
  });

  it('should offer tools as functionDeclarations with a schema Gemini accepts', async () => {
    const tool: ToolSpec = {
      name: 'search',
      description: 'Search.',
      parameters: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          filter: { type: 'object', properties: { field: { type: 'string' } }, additionalProperties: false },
          tags: { type: 'array', items: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } },
          additionalProperties: { type: 'string', description: 'a property that happens to have this name' },
        },
        required: ['filter'],
        additionalProperties: false,
      },
    };
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request(hello, { tools: [tool] }));
    expect(server.requests[0]!.body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'search',
            description: 'Search.',
            parameters: {
              type: 'object',
              properties: {
                filter: { type: 'object', properties: { field: { type: 'string' } } },
                tags: { type: 'array', items: { type: 'object', properties: {} } },
                additionalProperties: { type: 'string', description: 'a property that happens to have this name' },
              },
              required: ['filter'],
            },
          },
        ],
      },
    ]);
  });

  it('should clean subschemas under anyOf and leave enum and default values alone', () => {
    expect(
      toGeminiSchema({
        anyOf: [{ type: 'object', additionalProperties: false }, { type: 'null' }],
        default: { additionalProperties: 1 },
        enum: [{ $schema: 'x' }],
      }),
    ).toEqual({ anyOf: [{ type: 'object' }, { type: 'null' }], default: { additionalProperties: 1 }, enum: [{ $schema: 'x' }] });
  });

  it('should synthesise call ids by functionCall position and report tool_calls', async () => {
    server.enqueue({
      raw: rawCandidate([
        { text: 'Looking.' },
        { functionCall: { name: 'read_records', args: { table: 'a' } } },
        { functionCall: { name: 'describe_tables' } },
      ]),
    });
    const completion = await provider().complete(request(hello));
    expect(completion).toEqual({
      content: 'Looking.',
      toolCalls: [
        { id: 'call_0', name: 'read_records', arguments: { table: 'a' } },
        { id: 'call_1', name: 'describe_tables', arguments: {} },
      ],
      usage: { promptTokens: 11, completionTokens: 4 },
      finishReason: 'tool_calls',
    });
  });

  it('should surface thought parts as thinking, not content', async () => {
    server.enqueue({ raw: rawCandidate([{ text: 'Counting rows first.', thought: true }, { text: 'Twenty.' }]) });
    const completion = await provider().complete(request(hello));
    expect(completion).toMatchObject({ content: 'Twenty.', thinking: 'Counting rows first.', finishReason: 'stop' });
  });

  it('should answer a blocked prompt (no candidates) with empty content and content_filter', async () => {
    server.enqueue({
      raw: JSON.stringify({ promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }),
    });
    const completion = await provider().complete(request(hello));
    expect(completion).toEqual({ content: '', toolCalls: [], usage: { promptTokens: 9, completionTokens: 0 }, finishReason: 'content_filter' });
  });

  it.each([
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'other'],
  ])('should map finishReason %s to %s', async (reason, finishReason) => {
    server.enqueue({ raw: rawCandidate([{ text: 'x' }], reason) });
    expect((await provider().complete(request(hello))).finishReason).toBe(finishReason);
  });

  it('should read a candidate without content (stopped by a filter) as empty', async () => {
    server.enqueue({ raw: JSON.stringify({ candidates: [{ finishReason: 'SAFETY', index: 0 }] }) });
    const completion = await provider().complete(request(hello));
    expect(completion).toEqual({ content: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, finishReason: 'content_filter' });
  });

  it('should reject a functionCall whose args are not an object', async () => {
    server.enqueue({ raw: rawCandidate([{ functionCall: { name: 'read_records', args: [] } }]) });
    const error = await provider()
      .complete(request(hello))
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ProviderError', kind: 'malformed' });
  });
});

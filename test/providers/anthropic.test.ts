import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, createAnthropicProvider } from '../../src/providers/anthropic.ts';
import type { ChatMessage, CompletionRequest, ToolCall } from '../../src/runtime/llm.ts';
import type { ToolSpec } from '../../src/tools/tool.ts';
import { encodeAnthropic } from '../fixtures/wires/anthropic.ts';
import { startFakeServer, type FakeServer } from '../fixtures/wires/fake-server.ts';

const READ_RECORDS: ToolSpec = {
  name: 'read_records',
  description: 'Read rows of a table.',
  parameters: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] },
};

let server: FakeServer;
beforeAll(async () => {
  server = await startFakeServer(encodeAnthropic);
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const provider = () => createAnthropicProvider({ baseUrl: server.url, apiKey: 'sk-ant-test', timeoutMs: 5_000 });

function request(messages: ChatMessage[], overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return { model: 'claude-test', messages, tools: null, temperature: null, maxTokens: null, signal: new AbortController().signal, ...overrides };
}

/** A raw Messages response with the given content blocks. */
function rawMessage(content: unknown[], stopReason = 'end_turn'): string {
  return JSON.stringify({
    id: 'msg_raw',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 7, output_tokens: 2 },
  });
}

const calls: ToolCall[] = [
  { id: 'toolu_a', name: 'read_records', arguments: { table: 'a' } },
  { id: 'toolu_b', name: 'read_records', arguments: { table: 'b' } },
];

describe('Anthropic adapter', () => {
  it('should send the system prompt as a top-level field and no system role in messages', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(
      request([
        { role: 'system', content: 'Be terse.' },
        { role: 'system', content: 'Answer in English.' },
        { role: 'user', content: 'Hi' },
      ]),
    );
    const { body } = server.requests[0]!;
    expect(body.system).toBe('Be terse.\n\nAnswer in English.');
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  it('should omit system, tools, tool_choice and temperature when there are none', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request([{ role: 'user', content: 'Hi' }], { tools: [] }));
    expect(Object.keys(server.requests[0]!.body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('should post to /v1/messages with the key and the anthropic-version header', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request([{ role: 'user', content: 'Hi' }]));
    const sent = server.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(sent.headers.authorization).toBeUndefined();
  });

  it('should always send max_tokens: the configured cap, or the default when none is set', async () => {
    server.enqueue({ reply: { content: 'ok' } }, { reply: { content: 'ok' } });
    await provider().complete(request([{ role: 'user', content: 'Hi' }]));
    await provider().complete(request([{ role: 'user', content: 'Hi' }], { maxTokens: 300, temperature: 0.3 }));
    expect(server.requests[0]!.body.max_tokens).toBe(ANTHROPIC_DEFAULT_MAX_TOKENS);
    expect(server.requests[1]!.body).toMatchObject({ max_tokens: 300, temperature: 0.3 });
  });

  it('should offer tools with input_schema', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request([{ role: 'user', content: 'Hi' }], { tools: [READ_RECORDS] }));
    expect(server.requests[0]!.body.tools).toEqual([
      { name: 'read_records', description: 'Read rows of a table.', input_schema: READ_RECORDS.parameters },
    ]);
  });

  it('should merge two parallel tool results into one user message in call order, is_error only on the error', async () => {
    server.enqueue({ reply: { content: 'done' } });
    await provider().complete(
      request(
        [
          { role: 'user', content: 'Read a and b' },
          { role: 'assistant', content: 'Reading both.', toolCalls: calls },
          { role: 'tool', toolCallId: 'toolu_a', toolName: 'read_records', content: 'rows of a', isError: false },
          { role: 'tool', toolCallId: 'toolu_b', toolName: 'read_records', content: 'Error: no table b.', isError: true },
        ],
        { tools: [READ_RECORDS] },
      ),
    );
    const { body, raw } = server.requests[0]!;
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Read a and b' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'read_records', input: { table: 'a' } },
          { type: 'tool_use', id: 'toolu_b', name: 'read_records', input: { table: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'rows of a' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'Error: no table b.', is_error: true },
        ],
      },
    ]);
    expect(raw.match(/"is_error"/g)).toHaveLength(1);
  });

  it('should leave out an empty assistant text block and replay empty arguments as {}', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(
      request([
        { role: 'user', content: 'Tables?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_e', name: 'describe_tables', arguments: {} }] },
        { role: 'tool', toolCallId: 'toolu_e', toolName: 'describe_tables', content: 'customers', isError: false },
      ]),
    );
    expect(server.requests[0]!.body.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_e', name: 'describe_tables', input: {} }],
    });
  });

  it('should merge consecutive same-role turns so roles alternate', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(
      request([
        { role: 'user', content: 'First.' },
        { role: 'user', content: 'Second.' },
        { role: 'assistant', content: 'A.', toolCalls: [] },
        { role: 'assistant', content: 'B.', toolCalls: [] },
        { role: 'user', content: 'Third.' },
      ]),
    );
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'First.' }, { type: 'text', text: 'Second.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A.' }, { type: 'text', text: 'B.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Third.' }] },
    ]);
  });

  it('should surface thinking blocks as thinking, join text blocks and ignore unknown blocks', async () => {
    server.enqueue({
      raw: rawMessage([
        { type: 'thinking', thinking: 'The user wants a count.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Twenty ' },
        { type: 'text', text: 'customers.' },
      ]),
    });
    const completion = await provider().complete(request([{ role: 'user', content: 'How many?' }]));
    expect(completion).toEqual({
      content: 'Twenty customers.',
      thinking: 'The user wants a count.',
      toolCalls: [],
      usage: { promptTokens: 7, completionTokens: 2 },
      finishReason: 'stop',
    });
  });

  it.each([
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'other'],
  ])('should map stop_reason %s to %s', async (stopReason, finishReason) => {
    server.enqueue({ raw: rawMessage([{ type: 'text', text: 'x' }], stopReason) });
    const completion = await provider().complete(request([{ role: 'user', content: 'Hi' }]));
    expect(completion.finishReason).toBe(finishReason);
  });

  it('should reject a tool_use block whose input is not an object', async () => {
    server.enqueue({ raw: rawMessage([{ type: 'tool_use', id: 'toolu_x', name: 'read_records', input: [] }], 'tool_use') });
    const error = await provider()
      .complete(request([{ role: 'user', content: 'Hi' }]))
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ProviderError', kind: 'malformed' });
  });
});

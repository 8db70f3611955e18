import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOllamaProvider } from '../../src/providers/ollama.ts';
import type { ChatMessage, CompletionRequest } from '../../src/runtime/llm.ts';
import type { ToolSpec } from '../../src/tools/tool.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';
import { OLLAMA_PATH, ollamaWire } from '../fixtures/wires/ollama.ts';

const READ_RECORDS: ToolSpec = {
  name: 'read_records',
  description: 'Read rows of a table.',
  parameters: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] },
};
const question: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'How many customers?' },
];

function request(overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return { model: 'qwen3:8b', messages: question, tools: null, temperature: null, maxTokens: null, signal: new AbortController().signal, ...overrides };
}

/** A raw `/api/chat` body whose message carries `toolCalls` verbatim. */
function rawChat(message: Record<string, unknown>, extra: Record<string, unknown> = {}): { raw: string } {
  return {
    raw: JSON.stringify({
      model: 'qwen3:8b',
      created_at: '2025-10-01T12:00:00.000Z',
      message: { role: 'assistant', content: '', ...message },
      done_reason: 'stop',
      done: true,
      prompt_eval_count: 40,
      eval_count: 12,
      ...extra,
    }),
  };
}

const replayed: ChatMessage[] = [
  ...question,
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'call_0', name: 'read_records', arguments: { table: 'customers' } },
      { id: 'call_1', name: 'describe_tables', arguments: {} },
    ],
  },
  { role: 'tool', toolCallId: 'call_0', toolName: 'read_records', content: '42 rows', isError: false },
  { role: 'tool', toolCallId: 'call_1', toolName: 'describe_tables', content: 'customers, orders', isError: false },
];

describe('Ollama adapter', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await ollamaWire.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const provider = (apiKey: string | null = null) => createOllamaProvider({ baseUrl: server.url, apiKey, timeoutMs: 5_000 });

  it('should post a non-streaming request to /api/chat without an Authorization header when no key is set', async () => {
    server.enqueue({ reply: { content: 'Forty-two.' } });
    await provider().complete(request());
    const sent = server.requests[0]!;
    expect(sent.path).toBe(OLLAMA_PATH);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.stream).toBe(false);
  });

  it('should send the key as a bearer token when one is set', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider('ollama-cloud-key').complete(request());
    expect(server.requests[0]!.headers.authorization).toBe('Bearer ollama-cloud-key');
  });

  it('should carry maxTokens as options.num_predict and send no options when nothing is set', async () => {
    server.enqueue({ reply: { content: 'a' } }, { reply: { content: 'b' } });
    await provider().complete(request({ temperature: 0.3, maxTokens: 128 }));
    await provider().complete(request());
    const [tuned, plain] = server.requests.map((sent) => sent.body);
    expect(tuned.options).toEqual({ temperature: 0.3, num_predict: 128 });
    expect(tuned).not.toHaveProperty('max_tokens');
    expect(plain).not.toHaveProperty('options');
  });

  it('should replay calls with object arguments and tool turns by name, never with a tool_call_id', async () => {
    server.enqueue({ reply: { content: '42 customers.' } });
    await provider().complete(request({ messages: replayed, tools: [READ_RECORDS] }));
    const sent = server.requests[0]!;
    expect(sent.raw).not.toContain('tool_call_id');
    expect(sent.raw).not.toContain('call_0');
    expect(sent.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { function: { name: 'read_records', arguments: { table: 'customers' } } },
          { function: { name: 'describe_tables', arguments: {} } },
        ],
      },
      { role: 'tool', content: '42 rows', tool_name: 'read_records' },
      { role: 'tool', content: 'customers, orders', tool_name: 'describe_tables' },
    ]);
  });

  it('should synthesise ids from raw positions, skipping malformed calls', async () => {
    server.enqueue(
      rawChat({
        tool_calls: [
          { function: { name: 'read_records', arguments: { table: 'a' } } },
          { function: { arguments: { table: 'no name' } } },
          { function: { name: 'read_records', arguments: { table: 'c' } } },
          { function: { name: 'read_records', arguments: ['not', 'an', 'object'] } },
          { function: { name: 'read_records', arguments: '{"table": "bro' } },
          'not a call',
        ],
      }),
    );
    const completion = await provider().complete(request({ tools: [READ_RECORDS] }));
    expect(completion.toolCalls).toEqual([
      { id: 'call_0', name: 'read_records', arguments: { table: 'a' } },
      { id: 'call_2', name: 'read_records', arguments: { table: 'c' } },
    ]);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it('should decode string-encoded arguments and read absent ones as {}', async () => {
    server.enqueue(
      rawChat({
        tool_calls: [
          { function: { name: 'read_records', arguments: '{"table":"orders"}' } },
          { function: { name: 'describe_tables' } },
        ],
      }),
    );
    const completion = await provider().complete(request({ tools: [READ_RECORDS] }));
    expect(completion.toolCalls.map((call) => call.arguments)).toEqual([{ table: 'orders' }, {}]);
  });

  it('should answer a plain completion that replays tool turns, and still map any calls it returns', async () => {
    server.enqueue(rawChat({ tool_calls: [{ function: { name: 'read_records', arguments: { table: 'x' } } }] }));
    const completion = await provider().complete(request({ messages: replayed, tools: null }));
    const sent = server.requests[0]!;
    expect(sent.body).not.toHaveProperty('tools');
    expect(sent.raw).not.toContain('tool_call_id');
    expect(sent.body.messages.filter((message: { role: string }) => message.role === 'tool')).toHaveLength(2);
    expect(completion.toolCalls).toEqual([{ id: 'call_0', name: 'read_records', arguments: { table: 'x' } }]);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it('should surface thinking, map done_reason and read missing counts as zero', async () => {
    server.enqueue(
      rawChat({ content: 'Cut off', thinking: 'Let me count.' }, { done_reason: 'length', prompt_eval_count: undefined, eval_count: undefined }),
      rawChat({ content: 'Loaded?' }, { done_reason: 'load' }),
    );
    expect(await provider().complete(request())).toEqual({
      content: 'Cut off',
      toolCalls: [],
      usage: { promptTokens: 0, completionTokens: 0 },
      finishReason: 'length',
      thinking: 'Let me count.',
    });
    expect((await provider().complete(request())).finishReason).toBe('other');
  });
});

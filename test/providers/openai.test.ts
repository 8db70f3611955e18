import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiProvider } from '../../src/providers/openai.ts';
import type { ChatMessage, CompletionRequest } from '../../src/runtime/llm.ts';
import type { ToolSpec } from '../../src/tools/tool.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';
import { OPENAI_PATH, openaiWire } from '../fixtures/wires/openai.ts';

const DESCRIBE: ToolSpec = { name: 'describe_tables', description: 'List tables.', parameters: { type: 'object', properties: {} } };
const question: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'How many tables?' },
];

function request(overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return { model: 'gpt-test', messages: question, tools: null, temperature: null, maxTokens: null, signal: new AbortController().signal, ...overrides };
}

/** A raw Chat Completions body with one choice whose message is `message`. */
function rawCompletion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): { raw: string } {
  return {
    raw: JSON.stringify({
      id: 'chatcmpl-raw',
      object: 'chat.completion',
      created: 1_760_000_000,
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
      ...extra,
    }),
  };
}

describe('OpenAI-compatible adapter', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await openaiWire.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const provider = (apiKey: string | null = 'sk-test') => createOpenAiProvider({ baseUrl: `${server.url}/v1/`, apiKey, timeoutMs: 5_000 });

  it('should post to {baseUrl}/chat/completions without an Authorization header when no key is set', async () => {
    server.enqueue({ reply: { content: 'Two.' } }, { reply: { content: 'Two.' } });
    await provider(null).complete(request());
    await provider('').complete(request());
    for (const sent of server.requests) {
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe(OPENAI_PATH);
      expect(sent.headers.authorization).toBeUndefined();
    }
  });

  it('should send the key as a bearer token', async () => {
    server.enqueue({ reply: { content: 'Two.' } });
    await provider('sk-live').complete(request());
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-live');
  });

  it('should offer tools without tool_choice and send temperature and max_tokens only when set', async () => {
    server.enqueue({ reply: { content: 'a' } }, { reply: { content: 'b' } });
    await provider().complete(request({ tools: [DESCRIBE], temperature: 0, maxTokens: 64 }));
    await provider().complete(request());
    const [offered, plain] = server.requests.map((sent) => sent.body);
    expect(offered.tools).toEqual([{ type: 'function', function: { name: 'describe_tables', description: 'List tables.', parameters: DESCRIBE.parameters } }]);
    expect(offered).not.toHaveProperty('tool_choice');
    expect(offered).toMatchObject({ temperature: 0, max_tokens: 64 });
    expect(Object.keys(plain).sort()).toEqual(['messages', 'model']);
  });

  it('should replay a tools-only assistant turn with null content, "{}" arguments and a content-only tool message', async () => {
    server.enqueue({ reply: { content: 'Two tables.' } });
    const call = { id: 'call_9', name: 'describe_tables', arguments: {} };
    await provider().complete(
      request({
        tools: [DESCRIBE],
        messages: [
          ...question,
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', toolCallId: 'call_9', toolName: 'describe_tables', content: 'Error: tool "describe_tables" failed.', isError: true },
        ],
      }),
    );
    const sent = server.requests[0]!;
    const [assistant, tool] = sent.body.messages.slice(2);
    expect(assistant).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'describe_tables', arguments: '{}' } }],
    });
    expect(tool).toEqual({ role: 'tool', tool_call_id: 'call_9', content: 'Error: tool "describe_tables" failed.' });
    expect(sent.raw).toContain('"arguments":"{}"');
  });

  it('should surface reasoning_content, or reasoning, as thinking', async () => {
    server.enqueue(rawCompletion({ content: 'Two.', reasoning_content: 'Count the tables.' }), rawCompletion({ content: 'Two.', reasoning: 'Via OpenRouter.' }));
    expect(await provider().complete(request())).toMatchObject({ content: 'Two.', thinking: 'Count the tables.' });
    expect((await provider().complete(request())).thinking).toBe('Via OpenRouter.');
  });

  it('should report zero usage when the vendor sends none', async () => {
    server.enqueue(rawCompletion({ content: 'Two.' }, { usage: undefined }), rawCompletion({ content: 'Two.' }, { usage: null }));
    expect((await provider().complete(request())).usage).toEqual({ promptTokens: 0, completionTokens: 0 });
    expect((await provider().complete(request())).usage).toEqual({ promptTokens: 0, completionTokens: 0 });
  });

  it('should synthesise call_<index> for a call that has no id', async () => {
    server.enqueue(
      rawCompletion({
        content: null,
        tool_calls: [
          { id: 'call_vendor', type: 'function', function: { name: 'describe_tables', arguments: '{}' } },
          { type: 'function', function: { name: 'describe_tables', arguments: '{}' } },
          { id: '', type: 'function', function: { name: 'describe_tables', arguments: '{}' } },
        ],
      }),
    );
    const completion = await provider().complete(request({ tools: [DESCRIBE] }));
    expect(completion.toolCalls.map((call) => call.id)).toEqual(['call_vendor', 'call_1', 'call_2']);
    expect(completion.content).toBe('');
  });

  // Kept (its id must be answered on replay) with `{}`: the loop's schema check then refuses it
  // for a tool with required parameters, or runs a parameterless tool on its defaults.
  it('should keep a call whose arguments are not a JSON object, with arguments {}', async () => {
    server.enqueue(
      rawCompletion({
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'read_records', arguments: '{"table": "cust' } },
          { id: 'b', type: 'function', function: { name: 'read_records', arguments: '["customers"]' } },
          { id: 'c', type: 'function', function: { name: 'read_records', arguments: '' } },
          { id: 'd', type: 'function', function: { name: 'read_records', arguments: '{"table":"orders"}' } },
        ],
      }),
    );
    const completion = await provider().complete(request({ tools: [DESCRIBE] }));
    expect(completion.toolCalls.map((call) => [call.id, call.arguments])).toEqual([
      ['a', {}],
      ['b', {}],
      ['c', {}],
      ['d', { table: 'orders' }],
    ]);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['tool_calls', 'tool_calls'],
    ['eos', 'other'],
    [null, 'other'],
  ])('should map finish_reason %s to %s', async (wire, neutral) => {
    server.enqueue({
      raw: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: wire }] }),
    });
    expect((await provider().complete(request())).finishReason).toBe(neutral);
  });

  it('should refuse an answer without choices as malformed', async () => {
    server.enqueue({ raw: JSON.stringify({ id: 'x', object: 'chat.completion', choices: [] }) });
    await expect(provider().complete(request())).rejects.toMatchObject({ kind: 'malformed' });
  });
});

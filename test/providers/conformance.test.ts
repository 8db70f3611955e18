import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, type ChatMessage, type CompletionRequest } from '../../src/runtime/llm.ts';
import type { ToolSpec } from '../../src/tools/tool.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';
import { anthropicWire } from '../fixtures/wires/anthropic.ts';
import { geminiWire } from '../fixtures/wires/gemini.ts';
import { ollamaWire } from '../fixtures/wires/ollama.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import type { WireFixture } from './kit.ts';

/** The SAME scenarios against every wire (graphql-ws style: one behaviour, every adapter). */
const WIRES: readonly WireFixture[] = [openaiWire, anthropicWire, ollamaWire, geminiWire];

const KEY = 'test-key-CANARY-4b1d';
const READ_RECORDS: ToolSpec = {
  name: 'read_records',
  description: 'Read rows of a table.',
  parameters: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] },
};
const DESCRIBE: ToolSpec = { name: 'describe_tables', description: 'List tables.', parameters: { type: 'object', properties: {} } };

function request(messages: ChatMessage[], tools: ToolSpec[] | null, signal = new AbortController().signal): CompletionRequest {
  return { model: 'vendor-model-1', messages, tools, temperature: 0.2, maxTokens: 256, signal };
}

const question: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'How many customers?' },
];

describe.each(WIRES)('$name adapter conformance', (wire) => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await wire.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const provider = (timeoutMs = 5_000) => wire.adapter(server, { apiKey: KEY, timeoutMs });

  it('should answer a plain completion with NO tools field, the model id, the system prompt and the key', async () => {
    server.enqueue({ reply: { content: 'Twenty.', usage: { promptTokens: 12, completionTokens: 3 } } });
    const completion = await provider().complete(request(question, null));
    expect(completion).toMatchObject({ content: 'Twenty.', toolCalls: [], usage: { promptTokens: 12, completionTokens: 3 }, finishReason: 'stop' });
    const sent = wire.read(server.requests[0]!);
    expect(sent.toolNames).toBeUndefined();
    expect(sent.model).toBe('vendor-model-1');
    expect(sent.system).toBe('You are terse.');
    expect(sent.userTexts).toEqual(['How many customers?']);
    expect(wire.keyOf(server.requests[0]!)).toContain(KEY);
  });

  it('should send an empty tool list as no tools field at all', async () => {
    server.enqueue({ reply: { content: 'ok' } });
    await provider().complete(request(question, []));
    expect(wire.read(server.requests[0]!).toolNames).toBeUndefined();
  });

  it('should offer tools and return one requested call with object arguments', async () => {
    server.enqueue({ reply: { toolCalls: [{ id: 'call_a', name: 'read_records', arguments: { table: 'customers' } }], usage: { promptTokens: 30, completionTokens: 9 } } });
    const completion = await provider().complete(request(question, [READ_RECORDS, DESCRIBE]));
    expect(wire.read(server.requests[0]!).toolNames).toEqual(['read_records', 'describe_tables']);
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.toolCalls).toHaveLength(1);
    expect(completion.toolCalls[0]).toMatchObject({ name: 'read_records', arguments: { table: 'customers' } });
    expect(completion.toolCalls[0]!.id).toMatch(/\S/);
  });

  it('should return parallel calls in order with distinct ids', async () => {
    server.enqueue({
      reply: {
        toolCalls: [
          { id: 'call_1', name: 'read_records', arguments: { table: 'a' } },
          { id: 'call_2', name: 'read_records', arguments: { table: 'b' } },
          { id: 'call_3', name: 'describe_tables', arguments: {} },
        ],
      },
    });
    const completion = await provider().complete(request(question, [READ_RECORDS, DESCRIBE]));
    expect(completion.toolCalls.map((call) => [call.name, call.arguments])).toEqual([
      ['read_records', { table: 'a' }],
      ['read_records', { table: 'b' }],
      ['describe_tables', {}],
    ]);
    expect(new Set(completion.toolCalls.map((call) => call.id)).size).toBe(3);
  });

  it('should read empty arguments as {} and replay them as an object, never an array', async () => {
    server.enqueue({ reply: { toolCalls: [{ id: 'call_e', name: 'describe_tables', arguments: {} }] } });
    const first = await provider().complete(request(question, [DESCRIBE]));
    expect(first.toolCalls[0]!.arguments).toEqual({});
    server.enqueue({ reply: { content: 'Two tables.' } });
    const call = first.toolCalls[0]!;
    await provider().complete(
      request(
        [
          ...question,
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', toolCallId: call.id, toolName: call.name, content: 'customers, orders', isError: false },
        ],
        [DESCRIBE],
      ),
    );
    const replay = server.requests[1]!;
    for (const pattern of wire.emptyArgumentsAsArray) expect(replay.raw).not.toMatch(pattern);
    const sent = wire.read(replay);
    expect(sent.replayedCalls).toHaveLength(1);
    expect(sent.replayedCalls[0]).toMatchObject({ name: 'describe_tables' });
    const replayedArguments = sent.replayedCalls[0]!.arguments;
    expect(typeof replayedArguments === 'string' ? JSON.parse(replayedArguments) : replayedArguments).toEqual({});
    expect(sent.toolResults).toEqual([expect.objectContaining({ content: 'customers, orders' })]);
  });

  it('should replay a tool error result as an error where the wire can say so', async () => {
    server.enqueue({ reply: { content: 'Sorry.' } });
    const call = { id: 'call_x', name: 'read_records', arguments: { table: 'secrets' } };
    await provider().complete(
      request(
        [
          ...question,
          { role: 'assistant', content: 'Let me look.', toolCalls: [call] },
          { role: 'tool', toolCallId: call.id, toolName: call.name, content: 'Error: tool "read_records" failed.', isError: true },
        ],
        [READ_RECORDS],
      ),
    );
    const [result] = wire.read(server.requests[0]!).toolResults;
    expect(result?.content).toBe('Error: tool "read_records" failed.');
    expect(result?.isError === undefined || result.isError === true).toBe(true);
  });

  it.each([401, 429, 500])('should turn HTTP %i into a ProviderError with the status and without the body', async (status) => {
    server.enqueue({ status, body: JSON.stringify({ error: { message: `body-CANARY echoing ${KEY}` } }) });
    const error = await provider().complete(request(question, null)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'http', status });
    expect((error as Error).message).not.toContain('CANARY');
  });

  it.each([
    ['not JSON', 'this is not json'],
    ['the wrong shape', JSON.stringify({ unexpected: true })],
  ])('should turn a body that is %s into a malformed ProviderError', async (_label, raw) => {
    server.enqueue({ raw });
    const error = await provider().complete(request(question, null)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'malformed' });
  });

  it('should give up after its timeout', async () => {
    server.enqueue({ hang: true });
    const error = await provider(300).complete(request(question, null)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: 'timeout' });
  });

  it('should stop when the caller aborts', async () => {
    server.enqueue({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await provider().complete(request(question, null, controller.signal)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: 'aborted' });
  });
});

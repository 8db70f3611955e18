import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/runtime/llm.ts';
import { alternatingTurns, systemPrompt, type TurnSpelling } from '../../src/providers/turns.ts';

/** Parts spelled as readable strings, so each test shows the turns a wire would receive. */
const SPELLING: TurnSpelling<string, 'model'> = {
  modelRole: 'model',
  text: (text) => `text:${text}`,
  call: (call) => `call:${call.id}:${call.name}`,
  result: (message) => `result:${message.toolCallId}:${message.content}${message.isError ? ':error' : ''}`,
};

const system = (content: string): ChatMessage => ({ role: 'system', content });
const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string, ...toolCalls: { id: string; name: string }[]): ChatMessage => ({
  role: 'assistant',
  content,
  toolCalls: toolCalls.map((call) => ({ ...call, arguments: {} })),
});
const result = (id: string, content: string, isError = false): ChatMessage => ({ role: 'tool', toolCallId: id, toolName: 'read_records', content, isError });

describe('alternatingTurns (the Anthropic and Gemini turn shape)', () => {
  it('should leave system messages out and merge consecutive user messages into one turn', () => {
    const messages: ChatMessage[] = [system('Be terse.'), user('Hello.'), user('How many customers?')];
    expect(alternatingTurns(messages, SPELLING)).toEqual([{ role: 'user', parts: ['text:Hello.', 'text:How many customers?'] }]);
  });

  it('should send a model turn as its text then its calls, in order, under the vendor name for the model role', () => {
    const messages: ChatMessage[] = [
      user('Count.'),
      assistant('Looking.', { id: 'c1', name: 'describe_tables' }, { id: 'c2', name: 'read_records' }),
    ];
    expect(alternatingTurns(messages, SPELLING)).toEqual([
      { role: 'user', parts: ['text:Count.'] },
      { role: 'model', parts: ['text:Looking.', 'call:c1:describe_tables', 'call:c2:read_records'] },
    ]);
  });

  it('should group every result of one model turn, and the user text after them, into a single user turn in order', () => {
    const messages: ChatMessage[] = [
      user('Count.'),
      assistant('', { id: 'c1', name: 'read_records' }, { id: 'c2', name: 'read_records' }),
      result('c1', '3 rows'),
      result('c2', 'no such table', true),
      user('And now?'),
      assistant('Three.'),
    ];
    expect(alternatingTurns(messages, SPELLING)).toEqual([
      { role: 'user', parts: ['text:Count.'] },
      { role: 'model', parts: ['call:c1:read_records', 'call:c2:read_records'] },
      { role: 'user', parts: ['result:c1:3 rows', 'result:c2:no such table:error', 'text:And now?'] },
      { role: 'model', parts: ['text:Three.'] },
    ]);
  });

  it('should drop empty text, and a turn left with nothing, so the turns around it merge', () => {
    const messages: ChatMessage[] = [user('First.'), assistant(''), user(''), user('Second.')];
    expect(alternatingTurns(messages, SPELLING)).toEqual([{ role: 'user', parts: ['text:First.', 'text:Second.'] }]);
  });

  it('should answer no turns for no messages but system ones', () => {
    expect(alternatingTurns([system('Be terse.')], SPELLING)).toEqual([]);
  });
});

describe('systemPrompt', () => {
  it('should join every non-empty system message, in order, one paragraph each', () => {
    const messages: ChatMessage[] = [system('Be terse.'), user('Hello.'), system(''), system('Answer in French.')];
    expect(systemPrompt(messages)).toBe('Be terse.\n\nAnswer in French.');
  });

  it('should answer an empty prompt when there is no system text', () => {
    expect(systemPrompt([user('Hello.')])).toBe('');
  });
});

import type { ChatMessage, ToolCall } from '../runtime/llm.ts';

/** A tool's result as the loop replays it. */
export type ToolResultMessage = Extract<ChatMessage, { role: 'tool' }>;

/** How one vendor spells the parts of a turn, and what it calls the model's role. */
export interface TurnSpelling<Part, ModelRole extends string> {
  readonly modelRole: ModelRole;
  text(text: string): Part;
  call(call: ToolCall): Part;
  result(message: ToolResultMessage): Part;
}

export interface Turn<Role extends string, Part> {
  readonly role: Role;
  readonly parts: Part[];
}

/**
 * Neutral messages as the strictly alternating turns Anthropic's and Gemini's wires require (both
 * answer 400 otherwise). A tool result is a part of a USER turn, so every result of one model turn
 * (and any user text after them) merges into a single user turn, in call order, as both vendors
 * match results to calls. Empty text parts and turns left empty are dropped: both wires reject
 * them. System messages are left out: both wires carry the prompt apart (see `systemPrompt`).
 */
export function alternatingTurns<Part, ModelRole extends string>(
  messages: readonly ChatMessage[],
  spelling: TurnSpelling<Part, ModelRole>,
): Turn<'user' | ModelRole, Part>[] {
  const turns: Turn<'user' | ModelRole, Part>[] = [];
  const append = (role: 'user' | ModelRole, parts: Part[]) => {
    if (parts.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  };
  const text = (content: string) => (content === '' ? [] : [spelling.text(content)]);
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        append('user', text(message.content));
        break;
      case 'assistant':
        append(spelling.modelRole, [...text(message.content), ...message.toolCalls.map((call) => spelling.call(call))]);
        break;
      case 'tool':
        append('user', [spelling.result(message)]);
        break;
    }
  }
  return turns;
}

/** Every non-empty system message, in order, one paragraph each: the prompt both wires send apart. */
export function systemPrompt(messages: readonly ChatMessage[]): string {
  return messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .filter((content) => content !== '')
    .join('\n\n');
}

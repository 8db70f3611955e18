import type { ToolSpec } from '../tools/tool.ts';

/** Shared shapes of the vendor wires: JSON objects (never arrays), and OpenAI-style function tools. */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as a JSON object, or undefined: arrays and scalars are not arguments. */
export function plainObject(value: unknown): Record<string, unknown> | undefined {
  return isPlainObject(value) ? value : undefined;
}

/** A copy of the value as arguments: empty or malformed arguments go out as `{}`, never `[]`. */
export function argumentsObject(value: unknown): Record<string, unknown> {
  return { ...plainObject(value) };
}

/** `tools` as OpenAI's chat wire (and Ollama's, which copies it) declares them. */
export function functionTools(tools: readonly ToolSpec[]): unknown[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

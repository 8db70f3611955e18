import { randomUUID } from 'node:crypto';

/**
 * The id of a new run, of any kind: an agent run, or an MCP session (whose run id is its
 * `Mcp-Session-Id`). A random UUID, so that an id names one run everywhere and cannot be guessed.
 */
export function newRunId(): string {
  return randomUUID();
}

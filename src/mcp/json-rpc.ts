import type { ServerResponse } from 'node:http';

/**
 * The JSON-RPC of `/mcp` that the SDK does not write (serve.ts): the refusals the route answers
 * itself, and the client's cancellations it reads before the SDK sees the request.
 */

/** JSON-RPC error codes the refusals use: the SDK's own for a missing session, else the generic server error. */
export const SESSION_NOT_FOUND = -32001;
export const SERVER_ERROR = -32000;
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** Unknown, another user's, or closed (anywhere, by anyone): the client initializes again. */
export const SESSION_NOT_FOUND_MESSAGE = 'Session not found: open a new one with an initialize request.';

/** Answers a request with a JSON-RPC error and this HTTP status (id null: it answers the request, not one of its messages). */
export function refuse(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The request ids a body's `notifications/cancelled` messages name (a single message or a batch). */
export function cancelledRequestIds(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((message: unknown) => {
    if (typeof message !== 'object' || message === null) return [];
    const { method, params } = message as { method?: unknown; params?: { requestId?: unknown } };
    const requestId = params?.requestId;
    return method === 'notifications/cancelled' && (typeof requestId === 'string' || typeof requestId === 'number') ? [String(requestId)] : [];
  });
}

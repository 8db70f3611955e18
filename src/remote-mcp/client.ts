import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';

/**
 * The most bytes read from one HTTP response of a remote server: a larger answer is cut off and the
 * operation fails (before the tool seam's own 50 000-byte bound, which then applies to what is left).
 */
export const MAX_REMOTE_RESPONSE_BYTES = 1024 * 1024;
/** Pages of `tools/list` followed, and tools kept: a server cannot make an import unbounded. */
const MAX_LIST_PAGES = 10;
export const MAX_REMOTE_TOOLS = 200;

/** Where a remote server is and the headers (often credentials) every request carries. */
export interface RemoteServer {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface RemoteOptions {
  /** The whole operation (connect + request) is abandoned after this many milliseconds. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly maxResponseBytes?: number;
}

export const REMOTE_FAILURES = ['unreachable', 'timeout', 'oversize', 'malformed', 'cancelled'] as const;
export type RemoteFailureKind = (typeof REMOTE_FAILURES)[number];

/**
 * A remote operation failed. The message names the kind and the SDK's or fetch's own message: it
 * goes to the server log only (it may quote the remote's answer), never to a client or the model.
 * Header values never appear in it: they are only ever handed to fetch.
 */
export class RemoteMcpError extends Error {
  override readonly name = 'RemoteMcpError';
  readonly kind: RemoteFailureKind;
  constructor(kind: RemoteFailureKind, message: string, options?: ErrorOptions) {
    super(`${kind}: ${message}`, options);
    this.kind = kind;
  }
}

/** A tool as the remote lists it; every field is outside input, checked again where it is used. */
export interface RemoteToolListing {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
}

// Lenient on purpose: the SDK's own `listTools` refuses the WHOLE list when one tool's schema is
// malformed; here only the envelope must hold, and each tool is judged on its own (tools.ts).
const listResultSchema = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string(), description: z.string().optional(), inputSchema: z.unknown() })),
  nextCursor: z.string().optional(),
});

const contentBlock = z.looseObject({ type: z.string(), text: z.unknown().optional() });
const callResultSchema = z.looseObject({
  content: z.array(contentBlock).optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

export interface RemoteCallResult {
  /** Text of the answer: text blocks joined; other block kinds are named, not inlined. */
  readonly text: string;
  readonly isError: boolean;
}

/** Wraps fetch so that no response body yields more than `maxBytes`; a larger one errors mid-stream. */
function boundedFetch(maxBytes: number, onOversize: () => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            onOversize();
            controller.error(new Error(`response exceeds ${maxBytes} bytes`));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * Opens a session with the remote server, runs `work`, and closes it. Every failure becomes a
 * RemoteMcpError of a known kind; the deadline covers the handshake and the work together.
 */
/** The SDK's client half, loaded at the first remote call or listing (not by every start). */
let clientSdkLoading: Promise<typeof import('@modelcontextprotocol/sdk/client/index.js') & typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')> | undefined;
const clientSdk = () =>
  (clientSdkLoading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]).then(([client, transport]) => ({ ...client, ...transport })));

async function withSession<T>(server: RemoteServer, options: RemoteOptions, work: (client: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let oversize = false;
  const { Client, StreamableHTTPClientTransport } = await clientSdk();
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { ...server.headers }, signal },
    fetch: boundedFetch(options.maxResponseBytes ?? MAX_REMOTE_RESPONSE_BYTES, () => (oversize = true)),
  });
  const client = new Client({ name: 'airlock', version: '1' }, { capabilities: {} });
  const requestOptions = { signal, timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs };
  // A server that never answers leaves SDK promises pending: the deadline settles the race.
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    return await Promise.race([
      (async () => {
        await client.connect(transport, requestOptions);
        return work(client, signal);
      })(),
      aborted,
    ]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (oversize) throw new RemoteMcpError('oversize', message, { cause: error });
    if (options.signal?.aborted) throw new RemoteMcpError('cancelled', message, { cause: error });
    if (deadline.aborted) throw new RemoteMcpError('timeout', `no answer within ${options.timeoutMs} ms`, { cause: error });
    if (error instanceof z.ZodError || /parse|json|invalid|unexpected/i.test(message)) throw new RemoteMcpError('malformed', message, { cause: error });
    throw new RemoteMcpError('unreachable', message, { cause: error });
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Lists the remote's tools (following pagination, bounded). */
export async function listRemoteTools(server: RemoteServer, options: RemoteOptions): Promise<RemoteToolListing[]> {
  return withSession(server, options, async (client, signal) => {
    const tools: RemoteToolListing[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, listResultSchema, { signal, timeout: options.timeoutMs });
      for (const tool of result.tools) tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema });
      cursor = result.nextCursor;
      if (!cursor || tools.length >= MAX_REMOTE_TOOLS) break;
    }
    return tools.slice(0, MAX_REMOTE_TOOLS);
  });
}

/** Calls one remote tool; the answer is reduced to text (structured content as JSON when there is no text). */
export async function callRemoteTool(server: RemoteServer, name: string, args: unknown, options: RemoteOptions): Promise<RemoteCallResult> {
  return withSession(server, options, async (client, signal) => {
    const result = await client.request(
      { method: 'tools/call', params: { name, arguments: (args ?? {}) as Record<string, unknown> } },
      callResultSchema,
      { signal, timeout: options.timeoutMs },
    );
    const parts = (result.content ?? []).map((block) =>
      block.type === 'text' && typeof block.text === 'string' ? block.text : `[${block.type.slice(0, 40)} content omitted]`,
    );
    if (parts.length === 0 && result.structuredContent) parts.push(JSON.stringify(result.structuredContent));
    return { text: parts.join('\n'), isError: result.isError === true };
  });
}

import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';
import { ProviderError } from '../runtime/llm.ts';

/** Options every HTTP adapter takes. */
export interface HttpProviderOptions {
  readonly baseUrl: string;
  readonly apiKey: string | null;
  /** Per-call timeout in milliseconds (default 60 000). */
  readonly timeoutMs?: number;
  /** Extra headers from the provider's settings (e.g. OpenRouter's `HTTP-Referer`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

/** A provider answer larger than this is refused as malformed rather than held in memory. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

class ResponseTooLarge extends Error {}
class TimedOut extends Error {}

/**
 * One POST over node:http(s) (keep-alive agents), far cheaper per call than the platform `fetch`
 * (WHATWG streams, request cloning): a provider call is the hottest I/O of a run. Rejects on a
 * network failure, on `signal` and after `timeoutMs` for the WHOLE exchange (body included).
 */
function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body, 'utf8');
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(payload.length) } });
    const stop = (error: Error) => request.destroy(error);
    const onAbort = () => stop(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const timer = setTimeout(() => stop(new TimedOut(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.once('error', (error) => {
      done();
      reject(error);
    });
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) stop(new ResponseTooLarge(`the answer exceeds ${MAX_RESPONSE_BYTES} bytes`));
        else chunks.push(chunk);
      });
      response.once('error', () => undefined); // the request's 'error' reports it
      response.once('end', () => {
        done();
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    if (signal.aborted) onAbort();
    request.end(payload);
  });
}

/**
 * POSTs JSON and validates the answer with `schema`. Every failure becomes a ProviderError: HTTP
 * status ≥ 400, a timeout, an abort by the caller, a network failure, an answer over
 * MAX_RESPONSE_BYTES, or a body that is not JSON or does not match. The response body never
 * reaches the error message (it is kept as `cause` only for a non-2xx status, truncated, for the
 * server log).
 */
export async function postJson<Schema extends z.ZodType>(
  provider: string,
  options: HttpProviderOptions,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  schema: Schema,
  signal: AbortSignal,
): Promise<z.output<Schema>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: { status: number; text: string };
  try {
    response = await post(
      new URL(joinUrl(options.baseUrl, path)),
      { 'content-type': 'application/json', accept: 'application/json', ...options.headers, ...headers },
      JSON.stringify(body),
      signal,
      timeoutMs,
    );
  } catch (error) {
    if (error instanceof ResponseTooLarge) throw new ProviderError(provider, 'malformed', null, { cause: error });
    throw failure(provider, error, signal);
  }
  const { status, text } = response;
  if (status >= 400) {
    throw new ProviderError(provider, 'http', status, { cause: new Error(`response body: ${text.slice(0, 500)}`) });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProviderError(provider, 'malformed', status);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ProviderError(provider, 'malformed', status, { cause: parsed.error });
  return parsed.data;
}

function failure(provider: string, error: unknown, caller: AbortSignal): ProviderError {
  if (caller.aborted) return new ProviderError(provider, 'aborted', null, { cause: error });
  if (error instanceof TimedOut) return new ProviderError(provider, 'timeout', null, { cause: error });
  // Node refuses, before sending anything, a header value it cannot carry (a key stored before it was checked).
  if ((error as { code?: unknown } | null)?.code === 'ERR_INVALID_CHAR') return new ProviderError(provider, 'credentials', null, { cause: error });
  return new ProviderError(provider, 'network', null, { cause: error });
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

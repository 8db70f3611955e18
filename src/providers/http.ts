import type { z } from 'zod';
import { ProviderError, type HttpProviderOptions } from './provider.ts';

export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * POSTs JSON and validates the answer with `schema`. Every failure becomes a ProviderError: HTTP
 * status ≥ 400, a timeout, an abort by the caller, a network failure, or a body that is not JSON
 * or does not match. The response body never reaches the error message (it is kept as `cause`
 * only for a non-2xx status, truncated, for the server log).
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
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const combined = AbortSignal.any([signal, timeout]);
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(joinUrl(options.baseUrl, path), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers, ...headers },
      body: JSON.stringify(body),
      signal: combined,
    });
  } catch (error) {
    throw failure(provider, error, signal, timeout);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw failure(provider, error, signal, timeout);
  }
  if (!response.ok) {
    throw new ProviderError(provider, 'http', response.status, { cause: new Error(`response body: ${text.slice(0, 500)}`) });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProviderError(provider, 'malformed', response.status);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ProviderError(provider, 'malformed', response.status, { cause: parsed.error });
  return parsed.data;
}

function failure(provider: string, error: unknown, caller: AbortSignal, timeout: AbortSignal): ProviderError {
  if (caller.aborted) return new ProviderError(provider, 'aborted', null, { cause: error });
  if (timeout.aborted) return new ProviderError(provider, 'timeout', null, { cause: error });
  return new ProviderError(provider, 'network', null, { cause: error });
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

import type { z } from 'zod';
import type { Completion, CompletionRequest, LlmProvider } from '../runtime/llm.ts';
import { postJson, type HttpProviderOptions } from './http.ts';

/**
 * What a vendor file says about its wire, and all it says: where a completion is POSTed, how the
 * key travels, the request body, the answer's shape and its reading. Everything else an HTTP
 * adapter does (timeouts, the size bound, keep-alive, mapping every failure to a ProviderError) is
 * `postJson`'s, reached through `httpAdapter` only, so the four vendors cannot drift apart there.
 */
export interface VendorWire<Response extends z.ZodType> {
  /** The adapter's `kind`, and the name its ProviderErrors carry. */
  readonly kind: string;
  /** Path below the provider's base URL (it may name the model, as Gemini's does). */
  path(request: CompletionRequest): string;
  /**
   * Headers for the key (none without one) and any fixed vendor header; computed once per adapter.
   * Default: the key as a Bearer token (RFC 6750), as OpenAI's wire and the servers copying it take it.
   */
  headers?(apiKey: string | null): Record<string, string>;
  toBody(request: CompletionRequest): Record<string, unknown>;
  /** The answer's shape: a body that does not match is a `malformed` ProviderError. */
  readonly response: Response;
  fromBody(response: z.output<Response>): Completion;
}

/** An LlmProvider that sends one POST per completion, as `wire` spells it. */
export function httpAdapter<Response extends z.ZodType>(options: HttpProviderOptions, wire: VendorWire<Response>): LlmProvider {
  const headers = wire.headers ? wire.headers(options.apiKey) : bearerKey(options.apiKey);
  return {
    kind: wire.kind,
    async complete(request: CompletionRequest): Promise<Completion> {
      const response = await postJson(wire.kind, options, wire.path(request), headers, wire.toBody(request), wire.response, request.signal);
      return wire.fromBody(response);
    },
  };
}

function bearerKey(apiKey: string | null): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

import { z } from 'zod';
import type { ProviderKind } from '../db/database.ts';
import { scriptedSettingsSchema } from './scripted.ts';

/** Headers the adapter sets itself, or that would change how the request is framed. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'accept']);
const headerName = z
  .string()
  .max(128, 'must be at most 128 characters')
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name (letters, digits and !#$%&\'*+.^_`|~-)')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the adapter and cannot be overridden');
/**
 * What an HTTP header value can carry (RFC 9110 field-vchar, SP and HTAB, as Node checks it): no
 * line break, no NUL, nothing beyond U+00FF. A pasted key that ends in "…" (U+2026) or a line break
 * is refused here, by its field, instead of failing every run later.
 */
export const HEADER_VALUE_CHARACTERS = /^[\t\x20-\x7e\x80-\xff]*$/;
const headerValue = z
  .string()
  .max(8_192, 'must be at most 8192 characters')
  .regex(HEADER_VALUE_CHARACTERS, 'must be text an HTTP header can carry: no line breaks, NUL or characters beyond U+00FF (a pasted "…"?)');

/** Extra request headers (e.g. OpenRouter's `HTTP-Referer`, a gateway's `x-api-key`): values are secrets. */
export const providerHeadersSchema = z
  .record(headerName, headerValue)
  .refine((headers) => Object.keys(headers).length <= 32, 'must list at most 32 headers');
export type ProviderHeaders = Readonly<Record<string, string>>;

/** Settings every HTTP adapter understands (the rest of a provider's settings is ignored). */
export const httpSettingsSchema = z
  .object({
    timeoutMs: z.number().int().min(100).max(600_000).optional(),
    headers: providerHeadersSchema.optional(),
  })
  .loose();

/** The settings a provider of this kind accepts: checked when they are stored, so runs never meet bad ones. */
export function providerSettingsSchema(kind: ProviderKind): z.ZodType {
  return kind === 'SCRIPTED' ? scriptedSettingsSchema : httpSettingsSchema;
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db, ProviderKind, ProviderRow, ProviderUpdate } from '../db/database.ts';
import { PROVIDER_KINDS } from '../db/database.ts';
import * as providers from '../db/repositories/providers.ts';
import type { SecretBox } from '../db/secret-box.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { providerHeadersSchema, providerSettingsSchema, type ProviderHeaders } from '../providers/settings.ts';
import { nullishShape, parseInput, requireId, uniquely } from './validate.ts';

export interface ProviderDeps {
  readonly db: Db;
  readonly secrets: SecretBox;
  /** Called with every API key the service sees, so the log scrubber can mask it. */
  readonly onSecret: (value: string) => void;
}

/** The AADs that bind a sealed key, and the sealed extra headers, to their provider row. */
const keyContext = (providerId: string) => `provider:${providerId}:api_key`;
const headersContext = (providerId: string) => `provider:${providerId}:headers`;

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const baseUrl = z
  .string()
  .trim()
  .max(2_000, 'must be at most 2000 characters')
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL')
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.username === '' && url.password === '';
    } catch {
      return true;
    }
  }, 'must not contain credentials; pass them as apiKey');
/** Sent as a header (`Authorization: Bearer …`, `x-api-key`): printable ASCII, no spaces or line breaks. */
const apiKey = z
  .string()
  .min(1, 'must not be empty')
  .max(4_096, 'must be at most 4096 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces or line breaks, as HTTP headers carry it (a pasted "…" or a trailing line break?)');
const settings = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 65_536, 'must encode to at most 64 KiB of JSON');

const optional = { baseUrl, apiKey, settings };
/** Settings are validated for the provider's kind, so a bad value is refused here, by path, not at every run. */
function checkSettings(kind: ProviderKind, value: unknown, context: z.RefinementCtx): void {
  const result = providerSettingsSchema(kind).safeParse(value ?? {});
  if (result.success) return;
  for (const issue of result.error.issues) context.addIssue({ code: 'custom', path: ['settings', ...issue.path], message: issue.message });
}

const createSchema = z
  .object({ name, kind: z.enum(PROVIDER_KINDS), ...nullishShape(optional) })
  .superRefine((data, context) => checkSettings(data.kind, data.settings, context));
// In an update, an absent field is left alone; `apiKey: null` removes the stored key.
const updateSchema = z.object(nullishShape({ name, kind: z.enum(PROVIDER_KINDS), ...optional }));

/**
 * `settings.headers` is split off: its values (often a gateway's `x-api-key` or `authorization`) are
 * sealed like the API key, and only their names are ever shown again.
 */
function splitHeaders(settings: Record<string, unknown>): { rest: Record<string, unknown>; headers: ProviderHeaders | undefined } {
  const { headers, ...rest } = settings;
  return { rest, headers: headers === undefined ? undefined : providerHeadersSchema.parse(headers) };
}

function sealHeaders(deps: Pick<ProviderDeps, 'secrets' | 'onSecret'>, providerId: string, headers: ProviderHeaders): string | null {
  if (Object.keys(headers).length === 0) return null;
  for (const value of Object.values(headers)) deps.onSecret(value);
  return deps.secrets.seal(JSON.stringify(headers), headersContext(providerId));
}

export async function createProvider(deps: ProviderDeps, input: unknown): Promise<ProviderRow> {
  const data = parseInput(createSchema, input);
  const id = randomUUID();
  if (data.apiKey) deps.onSecret(data.apiKey);
  const { rest, headers } = splitHeaders(data.settings ?? {});
  return uniquely(`A provider named "${data.name}" already exists.`, () =>
    providers.insertProvider(deps.db, {
      id,
      name: data.name,
      kind: data.kind,
      base_url: data.baseUrl ?? null,
      api_key_ciphertext: data.apiKey ? deps.secrets.seal(data.apiKey, keyContext(id)) : null,
      headers_ciphertext: headers ? sealHeaders(deps, id, headers) : null,
      settings: JSON.stringify(rest),
    }),
  );
}

export async function updateProvider(deps: ProviderDeps, id: string, input: Record<string, unknown>): Promise<ProviderRow> {
  requireId('Provider', id);
  const data = parseInput(updateSchema, input);
  if (data.kind != null || data.settings != null) {
    // The settings that will be stored must suit the kind that will be stored.
    const [current] = data.kind != null && data.settings != null ? [] : await providers.findProvidersByIds(deps.db, [id]);
    const kind = data.kind ?? current?.kind;
    if (!kind) throw new NotFoundError('Provider', id);
    const settings = data.settings ?? current?.settings;
    parseInput(z.unknown().superRefine((value, context) => checkSettings(kind, value, context)), settings);
  }
  const changes: ProviderUpdate = {};
  if (data.name != null) changes.name = data.name;
  if (data.kind != null) changes.kind = data.kind;
  if ('baseUrl' in input && input.baseUrl !== undefined) changes.base_url = data.baseUrl ?? null;
  if (data.settings != null) {
    // Settings replace the stored ones; the sealed headers change only when `headers` is given.
    const { rest, headers } = splitHeaders(data.settings);
    changes.settings = JSON.stringify(rest);
    if (headers) changes.headers_ciphertext = sealHeaders(deps, id, headers);
  }
  if ('apiKey' in input && input.apiKey !== undefined) {
    if (data.apiKey) deps.onSecret(data.apiKey);
    changes.api_key_ciphertext = data.apiKey ? deps.secrets.seal(data.apiKey, keyContext(id)) : null;
  }
  const row = await uniquely(`A provider named "${data.name ?? ''}" already exists.`, () =>
    providers.updateProvider(deps.db, id, changes),
  );
  if (!row) throw new NotFoundError('Provider', id);
  return row;
}

export async function deleteProvider(db: Db, id: string): Promise<string> {
  requireId('Provider', id);
  const models = await providers.countModelsOfProvider(db, id);
  if (models > 0) throw new ConflictError(`The provider is used by ${models} model(s); delete or move them first.`);
  if (!(await providers.deleteProvider(db, id))) throw new NotFoundError('Provider', id);
  return id;
}

/** Decrypts a provider's extra headers for a provider call; the values never go further. */
export function revealHeaders(deps: Pick<ProviderDeps, 'secrets' | 'onSecret'>, row: ProviderRow): ProviderHeaders | null {
  if (row.headers_ciphertext === null) return null;
  const headers = JSON.parse(deps.secrets.open(row.headers_ciphertext, headersContext(row.id))) as Record<string, string>;
  for (const value of Object.values(headers)) deps.onSecret(value);
  return headers;
}

/** The names of a provider's extra headers (what an admin may read back). */
export function headerNames(secrets: SecretBox, row: ProviderRow): string[] {
  if (row.headers_ciphertext === null) return [];
  return Object.keys(JSON.parse(secrets.open(row.headers_ciphertext, headersContext(row.id))) as object).sort();
}

/**
 * Start-up: headers stored in plaintext `settings` by an earlier version are sealed and removed
 * from the settings (idempotent; a row whose headers are already sealed keeps them).
 */
export async function sealPlaintextHeaders(deps: ProviderDeps): Promise<number> {
  let sealed = 0;
  for (const row of await providers.listProvidersWithPlaintextHeaders(deps.db)) {
    const { rest, headers } = splitHeaders(row.settings);
    const changes: ProviderUpdate = { settings: JSON.stringify(rest) };
    if (headers && row.headers_ciphertext === null) changes.headers_ciphertext = sealHeaders(deps, row.id, headers);
    await providers.updateProvider(deps.db, row.id, changes);
    sealed += 1;
  }
  return sealed;
}

/** Decrypts a provider's API key for a provider call; the plaintext never goes further. */
export function revealApiKey(deps: Pick<ProviderDeps, 'secrets' | 'onSecret'>, row: ProviderRow): string | null {
  if (row.api_key_ciphertext === null) return null;
  const key = deps.secrets.open(row.api_key_ciphertext, keyContext(row.id));
  deps.onSecret(key);
  return key;
}

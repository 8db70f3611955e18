import type { ProviderKind } from '../db/database.ts';
import type { LlmProvider } from '../runtime/llm.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createGeminiProvider } from './gemini.ts';
import type { HttpProviderOptions } from './http.ts';
import { createOllamaProvider } from './ollama.ts';
import { createOpenAiProvider } from './openai.ts';
import { createScriptedProvider } from './scripted.ts';
import { httpSettingsSchema, type ProviderHeaders } from './settings.ts';

/** Where each vendor answers when a provider has no base URL of its own. */
export const DEFAULT_BASE_URLS: Readonly<Record<Exclude<ProviderKind, 'SCRIPTED'>, string>> = {
  OPENAI: 'https://api.openai.com/v1',
  ANTHROPIC: 'https://api.anthropic.com',
  OLLAMA: 'http://127.0.0.1:11434',
  GEMINI: 'https://generativelanguage.googleapis.com',
};

/** Each HTTP vendor's adapter factory; they differ only in their wire (see http-adapter.ts). */
const HTTP_ADAPTERS: Readonly<Record<Exclude<ProviderKind, 'SCRIPTED'>, (options: HttpProviderOptions) => LlmProvider>> = {
  OPENAI: createOpenAiProvider,
  ANTHROPIC: createAnthropicProvider,
  OLLAMA: createOllamaProvider,
  GEMINI: createGeminiProvider,
};

/** A provider row as the adapter needs it (the row itself is stored by services/providers.ts). */
export interface ProviderConfig {
  readonly kind: ProviderKind;
  readonly baseUrl: string | null;
  readonly apiKey: string | null;
  /** Settings as stored: never the headers, which are sealed apart and passed opened here. */
  readonly settings: unknown;
  readonly headers?: ProviderHeaders | null;
}

/**
 * The LlmProvider adapter that speaks to the provider a row describes: a wire client, built per
 * run, storing nothing. (Storing a provider row is `createProvider` in services/providers.ts.)
 */
export function providerAdapterFor(config: ProviderConfig): LlmProvider {
  if (config.kind === 'SCRIPTED') return createScriptedProvider(config.settings);
  const settings = httpSettingsSchema.parse(config.settings ?? {});
  return HTTP_ADAPTERS[config.kind]({
    baseUrl: config.baseUrl ?? DEFAULT_BASE_URLS[config.kind],
    apiKey: config.apiKey,
    ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs }),
    ...(config.headers ? { headers: config.headers } : {}),
  });
}

import { z } from 'zod';
import type { ProviderKind } from '../db/database.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createGeminiProvider } from './gemini.ts';
import { createOllamaProvider } from './ollama.ts';
import { createOpenAiProvider } from './openai.ts';
import type { LlmProvider } from '../runtime/llm.ts';
import { createScriptedProvider, scriptedSettingsSchema } from './scripted.ts';

/** Where each vendor answers when a provider has no base URL of its own. */
export const DEFAULT_BASE_URLS: Readonly<Record<Exclude<ProviderKind, 'SCRIPTED'>, string>> = {
  OPENAI: 'https://api.openai.com/v1',
  ANTHROPIC: 'https://api.anthropic.com',
  OLLAMA: 'http://127.0.0.1:11434',
  GEMINI: 'https://generativelanguage.googleapis.com',
};

/** Settings every HTTP adapter understands (the rest of a provider's settings is ignored). */
const httpSettingsSchema = z
  .object({
    timeoutMs: z.number().int().min(100).max(600_000).optional(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .loose();

/** The settings a provider of this kind accepts: checked when they are stored, so runs never meet bad ones. */
export function providerSettingsSchema(kind: ProviderKind): z.ZodType {
  return kind === 'SCRIPTED' ? scriptedSettingsSchema : httpSettingsSchema;
}

export interface ProviderConfig {
  readonly kind: ProviderKind;
  readonly baseUrl: string | null;
  readonly apiKey: string | null;
  readonly settings: unknown;
}

/** Builds the adapter a provider row describes. */
export function createProvider(config: ProviderConfig): LlmProvider {
  if (config.kind === 'SCRIPTED') return createScriptedProvider(config.settings);
  const settings = httpSettingsSchema.parse(config.settings ?? {});
  const options = {
    baseUrl: config.baseUrl ?? DEFAULT_BASE_URLS[config.kind],
    apiKey: config.apiKey,
    ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs }),
    ...(settings.headers === undefined ? {} : { headers: settings.headers }),
  };
  switch (config.kind) {
    case 'OPENAI':
      return createOpenAiProvider(options);
    case 'ANTHROPIC':
      return createAnthropicProvider(options);
    case 'OLLAMA':
      return createOllamaProvider(options);
    case 'GEMINI':
      return createGeminiProvider(options);
  }
}

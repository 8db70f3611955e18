// What the console calls each value of the API's enums, in the order its forms offer them. The
// values are the server's (test/dashboard/labels.test.ts fails when a list here and its source
// differ): they are not imported because their modules are not browser code.

/** ProviderKind (src/db/database.ts PROVIDER_KINDS). */
export const KIND_LABELS = {
  OPENAI: 'OpenAI-compatible',
  ANTHROPIC: 'Anthropic',
  OLLAMA: 'Ollama',
  GEMINI: 'Gemini',
  SCRIPTED: 'Scripted (offline)',
} as const;

/** PrivacyLevel (src/runtime/privacy.ts PRIVACY_LEVELS): what of a run is stored. */
export const PRIVACY_LABELS = {
  NONE: 'NONE: no content stored',
  METADATA: 'METADATA: counts and names only, no content (the default)',
  REDACTED: 'REDACTED: content with secrets and e-mail addresses masked',
  FULL: 'FULL: content verbatim',
} as const;

/** TruncationMode (src/tools/bounds.ts TRUNCATION_MODES): how a tool output over the cap is cut. */
export const TRUNCATION_LABELS = {
  HEAD: 'HEAD: keep the start',
  MIDDLE: 'MIDDLE: keep the start and the end',
} as const;

/** BudgetPeriod (src/db/database.ts BUDGET_PERIODS). */
export const PERIOD_LABELS = {
  DAILY: 'Per day (UTC)',
  MONTHLY: 'Per month (UTC)',
} as const;

/** `[value, label]` pairs for a select. */
export const optionsOf = (labels: Readonly<Record<string, string>>): [string, string][] => Object.entries(labels);

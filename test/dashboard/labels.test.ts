import { describe, expect, it } from 'vitest';
import { BUDGET_PERIODS, PROVIDER_KINDS } from '../../src/db/database.ts';
import { PRIVACY_LEVELS } from '../../src/runtime/privacy.ts';
import { TRUNCATION_MODES } from '../../src/tools/bounds.ts';
import { KIND_LABELS, PERIOD_LABELS, PRIVACY_LABELS, TRUNCATION_LABELS } from '../../src/dashboard/app/labels.ts';

/** The console names every value of the API's enums, no more, in the server's order. */
describe("the console's labels of the API's enums", () => {
  it.each([
    ['ProviderKind', KIND_LABELS, PROVIDER_KINDS],
    ['PrivacyLevel', PRIVACY_LABELS, PRIVACY_LEVELS],
    ['TruncationMode', TRUNCATION_LABELS, TRUNCATION_MODES],
    ['BudgetPeriod', PERIOD_LABELS, BUDGET_PERIODS],
  ])('%s: one label per value', (_name, labels, values) => {
    expect(Object.keys(labels as object)).toEqual([...values]);
  });

  it('calls the OPENAI kind "OpenAI-compatible" (docs/console.md: tests select it by that name)', () => {
    expect(KIND_LABELS.OPENAI).toBe('OpenAI-compatible');
  });
});

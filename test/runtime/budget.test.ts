import { describe, expect, it } from 'vitest';
import { checkBudgets, periodStart, type ApplicableBudget } from '../../src/runtime/budget.ts';
import { plannedCost, priceUsage } from '../../src/runtime/usage.ts';
import { composeSystemPrompt } from '../../src/runtime/system-prompt.ts';

const budget = (limits: Partial<ApplicableBudget['limits']>, spent: Partial<ApplicableBudget['spent']>): ApplicableBudget => ({
  scope: 'USER',
  period: 'DAILY',
  limits: { maxRequests: 0, maxTokens: 0, maxCost: 0, ...limits },
  spent: { requests: 0, tokens: 0, cost: 0, ...spent },
});

describe('budget pre-flight', () => {
  it.each([
    ['0 means unlimited', budget({}, { requests: 1e9, tokens: 1e9, cost: 1e9 }), 100, null],
    ['deny when requests + 1 > limit', budget({ maxRequests: 3 }, { requests: 3 }), 0, 'requests'],
    ['allow the last request under the limit', budget({ maxRequests: 3 }, { requests: 2 }), 0, null],
    ['deny when tokens already exceed the limit', budget({ maxTokens: 1000 }, { tokens: 1001 }), 0, 'tokens'],
    ['allow tokens exactly at the limit', budget({ maxTokens: 1000 }, { tokens: 1000 }), 0, null],
    ['deny when cost + planned cost > limit', budget({ maxCost: 1 }, { cost: 0.9 }), 0.2, 'cost'],
    ['allow cost + planned cost = limit', budget({ maxCost: 1 }, { cost: 0.5 }), 0.5, null],
  ] as const)('should %s', (_name, applicable, planned, exceeded) => {
    const denial = checkBudgets([applicable], planned);
    expect(denial?.exceeded ?? null).toBe(exceeded);
  });

  it('should report the first refusing budget among several', () => {
    const user = budget({ maxRequests: 10 }, { requests: 1 });
    const configuration: ApplicableBudget = { ...budget({ maxCost: 1 }, { cost: 1 }), scope: 'CONFIGURATION', period: 'MONTHLY' };
    expect(checkBudgets([user, configuration], 0.01)).toEqual({ scope: 'CONFIGURATION', period: 'MONTHLY', exceeded: 'cost' });
  });

  it('should start periods at UTC midnight and the first of the month', () => {
    const now = new Date('2026-11-29T23:30:00-05:00');
    expect(periodStart('DAILY', now).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(periodStart('MONTHLY', now).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });
});

describe('usage and cost', () => {
  it('should price usage per million tokens', () => {
    expect(priceUsage({ promptTokens: 1_000_000, completionTokens: 500_000 }, { inputPricePerMTok: 2.5, outputPricePerMTok: 10 })).toEqual({
      promptTokens: 1_000_000,
      completionTokens: 500_000,
      cost: 7.5,
    });
  });

  it('should plan a call at the full output allowance', () => {
    expect(plannedCost('x'.repeat(4_000), 1_000, { inputPricePerMTok: 1, outputPricePerMTok: 1 })).toBeCloseTo(2_000 / 1e6, 12);
    expect(plannedCost('', null, { inputPricePerMTok: 0, outputPricePerMTok: 1 })).toBeCloseTo(4_096 / 1e6, 12);
  });
});

describe('system prompt', () => {
  it('should append skills in order and drop whole skills that do not fit the budget', () => {
    const composed = composeSystemPrompt('Base.', [
      { name: 'a', body: 'short' },
      { name: 'big', body: 'x'.repeat(500) },
      { name: 'c', body: 'also short' },
    ], 100);
    expect(composed.text).toBe('Base.\n\n## Skill: a\nshort\n\n## Skill: c\nalso short');
    expect(composed.droppedSkills).toEqual(['big']);
  });
});

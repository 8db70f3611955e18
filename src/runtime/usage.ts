import type { Usage } from './llm.ts';

/** Prices of a model, in currency units per million tokens. */
export interface ModelPrices {
  readonly inputPricePerMTok: number;
  readonly outputPricePerMTok: number;
}

/** Usage of one provider call or a whole run, with its cost. */
export interface PricedUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cost: number;
}

export const ZERO_USAGE: PricedUsage = Object.freeze({ promptTokens: 0, completionTokens: 0, cost: 0 });

export function priceUsage(usage: Usage, prices: ModelPrices): PricedUsage {
  return {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cost: (usage.promptTokens * prices.inputPricePerMTok + usage.completionTokens * prices.outputPricePerMTok) / 1_000_000,
  };
}

export function addUsage(a: PricedUsage, b: PricedUsage): PricedUsage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, cost: a.cost + b.cost };
}

/** Rough prompt size for the budget pre-flight: about four characters per token, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The most a call can cost before it is made: the estimated prompt at the input price plus the
 * full output allowance (`maxTokens`) at the output price. Without a cap, 4 096 output tokens.
 */
export function plannedCost(promptText: string, maxTokens: number | null, prices: ModelPrices): number {
  return (estimateTokens(promptText) * prices.inputPricePerMTok + (maxTokens ?? 4_096) * prices.outputPricePerMTok) / 1_000_000;
}

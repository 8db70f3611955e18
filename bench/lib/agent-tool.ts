/**
 * The one tool every agent variant calls: cheap, deterministic, no I/O, so that the benchmark
 * measures the runtime around the tool and not the tool. Shared by the bare loop, the AI SDK peer
 * and the Airlock tool module (`bench/bin/bench-tool.ts`).
 */
export const BENCH_TOOL_NAME = 'bench_lookup';
export const BENCH_TOOL_GROUP = 'bench';
export const BENCH_TOOL_DESCRIPTION = 'Look up the benchmark value for a round number n.';
export const BENCH_TOOL_JSON_SCHEMA = {
  type: 'object',
  properties: { n: { type: 'integer', description: 'The round number.' } },
  required: ['n'],
  additionalProperties: false,
} as const;

export const BENCH_SYSTEM_PROMPT = 'You are a benchmark agent. Call bench_lookup until you are done, then answer.';
export const BENCH_PROMPT = 'Look up the benchmark values, then summarise them.';

export function benchLookup(n: number): string {
  return `value(${n}) = ${n * 2}`;
}

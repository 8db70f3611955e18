/**
 * Airlock tool module for the agent-run benchmark, loaded with
 * `AIRLOCK_TOOL_MODULES=./bench/bin/bench-tool.ts`: the same cheap deterministic tool the bare loop
 * and the AI SDK peer call, in its own group `bench` so a configuration can offer only it.
 */
import { z } from 'zod';
import { ToolResult, type Tool } from 'airlock/tool';
import { BENCH_TOOL_DESCRIPTION, BENCH_TOOL_GROUP, BENCH_TOOL_NAME, benchLookup } from '../lib/agent-tool.ts';

const parameters = z.strictObject({ n: z.number().int().describe('The round number.') });

const benchLookupTool: Tool<z.output<typeof parameters>> = {
  name: BENCH_TOOL_NAME,
  description: BENCH_TOOL_DESCRIPTION,
  group: BENCH_TOOL_GROUP,
  parameters,
  enabledByDefault: true,
  requiresAdmin: false,
  effect: 'read',
  async execute({ n }) {
    return ToolResult.text(benchLookup(n));
  },
};

export default [benchLookupTool];

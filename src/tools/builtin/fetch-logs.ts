import { z } from 'zod';
import type { ToolData } from '../data.ts';
import { ToolResult } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingAdmin } from './actor-guard.ts';
import { capCell, redactSecrets } from '../../redaction/masking.ts';

export const DEFAULT_LOG_LINES = 50;
export const MAX_LOG_LINES = 200;
/** Longest log line shown, in characters; a stack trace or a request dump beyond that is noise. */
export const MAX_LOG_LINE_CHARS = 2_000;

const parameters = z.strictObject({
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LOG_LINES)
    .default(DEFAULT_LOG_LINES)
    .describe(`How many of the most recent lines: 1 to ${MAX_LOG_LINES} (default ${DEFAULT_LOG_LINES}).`),
});

type Args = z.output<typeof parameters>;

export const fetchLogsTool: Tool<Args, ToolData> = {
  name: 'fetch_logs',
  description: 'Show the most recent server log lines, oldest first, with secrets redacted.',
  group: 'system',
  parameters,
  enabledByDefault: true,
  requiresAdmin: true,
  effect: 'read',
  async execute(args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    // The logger already scrubs known secrets; a line may still carry one it never learnt
    // (a URL password, a vendor key in an error message), so every line is redacted again here.
    const lines = ctx.data
      .recentLogs(Math.min(Math.max(1, args.limit), MAX_LOG_LINES))
      .map((line) => capCell(redactSecrets(line.replace(/\r?\n$/, '')).replace(/\r/g, '\\r').replace(/\n/g, '\\n'), MAX_LOG_LINE_CHARS));
    if (lines.length === 0) return ToolResult.text('No log lines recorded yet.');
    return ToolResult.text([`${lines.length} most recent log line${lines.length === 1 ? '' : 's'}, oldest first:`, ...lines].join('\n'));
  },
};

import { z } from 'zod';
import type { Environment, ToolData } from '../data.ts';
import { ToolResult } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingAdmin } from './actor-guard.ts';
import { redactEnvValue } from '../../redaction/masking.ts';

const parameters = z.strictObject({
  prefix: z
    .string()
    .max(100)
    .optional()
    .describe('Only variables whose name starts with this, case-insensitive (e.g. "AIRLOCK_"). Omit for all.'),
});

type Args = z.output<typeof parameters>;

/** `NAME=value` lines sorted by name; a line break inside a value is shown escaped to keep one variable per line. */
function environmentLines(environment: Environment, prefix: string | undefined, show: (name: string, value: string) => string): string[] {
  const wanted = prefix?.toUpperCase() ?? '';
  return Object.keys(environment)
    .filter((name) => environment[name] !== undefined && name.toUpperCase().startsWith(wanted))
    .sort()
    .map((name) => `${name}=${show(name, environment[name]!).replace(/\r/g, '\\r').replace(/\n/g, '\\n')}`);
}

function describeEnvironment(args: Args, lines: string[], what: string): ToolResult {
  const scope = args.prefix ? ` starting with "${args.prefix}"` : '';
  if (lines.length === 0) return ToolResult.text(`No environment variables${scope}.`);
  return ToolResult.text([`${lines.length} environment variable${lines.length === 1 ? '' : 's'}${scope} (${what}):`, ...lines].join('\n'));
}

export const getEnvTool: Tool<Args, ToolData> = {
  name: 'get_env',
  description:
    'Show the server\'s environment variables. Values of secret-named variables are redacted and passwords in URLs are masked.',
  group: 'system',
  parameters,
  enabledByDefault: true,
  requiresAdmin: true,
  effect: 'read',
  async execute(args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const lines = environmentLines(ctx.data.environment(), args.prefix, redactEnvValue);
    return describeEnvironment(args, lines, 'secret values redacted');
  },
};

/** Off by default: it shows secrets verbatim, so an admin must switch it on deliberately. */
export const getEnvRawTool: Tool<Args, ToolData> = {
  name: 'get_env_raw',
  description: 'Show the server\'s environment variables verbatim, secrets included.',
  group: 'system',
  parameters,
  enabledByDefault: false,
  requiresAdmin: true,
  effect: 'read',
  async execute(args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const lines = environmentLines(ctx.data.environment(), args.prefix, (_name, value) => value);
    return describeEnvironment(args, lines, 'raw, secrets included');
  },
};

import { z } from 'zod';
import type { ToolData } from '../data.ts';
import { ToolResult } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingAdmin } from './actor-guard.ts';

const parameters = z.strictObject({});

type Args = z.output<typeof parameters>;

const MIB = 1024 * 1024;

function mebibytes(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

export const getRuntimeInfoTool: Tool<Args, ToolData> = {
  name: 'get_runtime_info',
  description: 'Show the server\'s Node.js version, uptime, memory use and database kind.',
  group: 'system',
  parameters,
  enabledByDefault: true,
  requiresAdmin: true,
  effect: 'read',
  async execute(_args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const info = ctx.data.runtimeInfo();
    return ToolResult.text(
      [
        `node: ${info.nodeVersion}`,
        `uptime: ${Math.floor(info.uptimeSeconds)} s`,
        `memory: rss ${mebibytes(info.memory.rss)}, heap used ${mebibytes(info.memory.heapUsed)}`,
        `database: ${info.dbKind === 'pglite' ? 'pglite (embedded)' : 'postgres'}`,
      ].join('\n'),
    );
  },
};

import { z } from 'zod';
import type { ToolData } from '../data.ts';
import { ToolResult, tableArtifact } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingAdmin } from './actor-guard.ts';
import { isCredentialColumn } from '../../redaction/masking.ts';

const parameters = z.strictObject({});

type Args = z.output<typeof parameters>;

export const listUsersTool: Tool<Args, ToolData> = {
  name: 'list_users',
  description: 'List the service\'s users: name, id, whether admin, and when created. Never shows tokens.',
  group: 'accounts',
  parameters,
  enabledByDefault: true,
  requiresAdmin: true,
  effect: 'read',
  async execute(_args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const users = await ctx.data.users.list();
    if (users.length === 0) return ToolResult.text('No users exist.');
    const rows = users.map((user) => [user.name, user.id, user.isAdmin ? 'admin' : 'user', user.createdAt.toISOString()]);
    const lines = [`${users.length} user${users.length === 1 ? '' : 's'}, oldest first:`];
    for (const [name, id, role, created] of rows) lines.push(`- ${name}: ${role}, id ${id}, created ${created}`);
    return ToolResult.text(lines.join('\n'), tableArtifact('Users', ['name', 'id', 'role', 'created'], rows));
  },
};

/** A stored value as plain JSON: dates as ISO strings, big integers and bytes as text. */
function plainValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  return value;
}

/**
 * Off by default: whole rows may grow columns nobody reviewed for exposure. Token hashes are never
 * in the data; any other credential-like column (see masking.ts) is dropped here as well, so a
 * column added later cannot leak through this tool.
 */
export const listUsersRawTool: Tool<Args, ToolData> = {
  name: 'list_users_raw',
  description: 'List the users as full stored rows, one JSON object per line (credential columns are never included).',
  group: 'accounts',
  parameters,
  enabledByDefault: false,
  requiresAdmin: true,
  effect: 'read',
  async execute(_args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const rows = await ctx.data.users.listRaw();
    if (rows.length === 0) return ToolResult.text('No users exist.');
    const lines = rows.map((row) =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(row)
            .filter(([column]) => !isCredentialColumn(column))
            .map(([column, value]) => [column, plainValue(value)]),
        ),
      ),
    );
    return ToolResult.text([`${rows.length} user row${rows.length === 1 ? '' : 's'}, oldest first, one JSON object per line:`, ...lines].join('\n'));
  },
};

import { z } from 'zod';
import type { ToolData } from '../data.ts';
import { ToolResult, tableArtifact } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingUser } from './actor-guard.ts';
import { isCredentialColumn } from '../../redaction/masking.ts';

const parameters = z.strictObject({});

type Args = z.output<typeof parameters>;

export const describeTablesTool: Tool<Args, ToolData> = {
  name: 'describe_tables',
  description:
    'List the tables of the records database you may read, with their columns and types. ' +
    'Columns marked "masked" hold credentials: read_records shows them as ***.',
  group: 'structure',
  parameters,
  enabledByDefault: true,
  requiresAdmin: false,
  effect: 'read',
  async execute(_args, ctx) {
    const actor = actingUser(ctx);
    if (actor instanceof ToolResult) return actor;

    const tables = await ctx.data.records.listTables(actor);
    if (tables.length === 0) return ToolResult.text('No tables are available to you.');

    const lines = [`${tables.length} table${tables.length === 1 ? '' : 's'} you may read (name: column type, …):`];
    const rows: string[][] = [];
    for (const table of tables) {
      const columns = table.columns.map((column) => {
        const masked = isCredentialColumn(column.name);
        rows.push([table.name, column.name, column.type, masked ? 'yes' : 'no']);
        return `${column.name} ${column.type}${masked ? ' (masked)' : ''}`;
      });
      lines.push(`${table.name}: ${columns.join(', ')}`);
    }
    return ToolResult.text(lines.join('\n'), tableArtifact('Readable tables', ['table', 'column', 'type', 'masked'], rows));
  },
};

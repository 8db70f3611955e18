import { z } from 'zod';
import type { RecordFilter, ToolData } from '../data.ts';
import { ToolResult, tableArtifact } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingUser } from './actor-guard.ts';
import { isCredentialColumn, MASKED_CELL, maskCell } from '../../redaction/masking.ts';

/** Bounds of one call: a page is small enough to read, paging deep enough for real tables. */
export const MAX_FILTERS = 5;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 50;
export const MAX_OFFSET = 10_000;
/** How an SQL NULL reads in the text and in the artifact (the same cell in both). */
export const NULL_CELL = 'NULL';

const filterSchema = z.strictObject({
  column: z.string().min(1).max(128).describe('A column of the table, exactly as describe_tables lists it.'),
  value: z
    .union([z.string().max(1_000), z.number(), z.boolean(), z.null()])
    .describe('The value the column must equal, compared as text (e.g. "42", "shipped", "true"); null matches NULL.'),
});

const parameters = z.strictObject({
  table: z.string().min(1).max(128).describe('The table to read, as describe_tables lists it (e.g. "customers").'),
  filters: z
    .array(filterSchema)
    .max(MAX_FILTERS)
    .default([])
    .describe(`Up to ${MAX_FILTERS} equality filters; a row must match all of them.`),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .describe(`Rows to return: 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`),
  offset: z
    .number()
    .int()
    .min(0)
    .max(MAX_OFFSET)
    .default(0)
    .describe(`Rows to skip, for the next page: 0 to ${MAX_OFFSET} (default 0).`),
});

type Args = z.output<typeof parameters>;

/**
 * The one refusal for a table the caller may not read, whether it is missing or merely not
 * granted: the two must be indistinguishable, or the tool would tell a user which tables exist.
 */
export function tableNotAvailable(table: string): string {
  return `Error: table "${table}" is not available.`;
}

/** The model may qualify the name with the schema it read about; the schema is always `records`. */
function unqualified(table: string): string {
  const trimmed = table.trim();
  return trimmed.toLowerCase().startsWith('records.') ? trimmed.slice('records.'.length) : trimmed;
}

function toFilter(filter: Args['filters'][number]): RecordFilter {
  return { column: filter.column, value: filter.value === null ? null : String(filter.value) };
}

export const readRecordsTool: Tool<Args, ToolData> = {
  name: 'read_records',
  description:
    'Read rows of one table of the records database, optionally filtered by column equality, one page at a time. ' +
    'Call describe_tables first to see the tables and columns you may read. Credential-like columns and secrets in cells are masked.',
  group: 'content',
  parameters,
  enabledByDefault: true,
  requiresAdmin: false,
  effect: 'read',
  async execute(args, ctx) {
    const actor = actingUser(ctx);
    if (actor instanceof ToolResult) return actor;

    // Filtering on a masked column would turn the filter into an oracle for the hidden value.
    const onMasked = args.filters.find((filter) => isCredentialColumn(filter.column));
    if (onMasked) {
      return ToolResult.error(`Error: column "${onMasked.column}" holds masked credentials and cannot be filtered on.`);
    }

    const table = unqualified(args.table);
    const page = await ctx.data.records.readRows(actor, {
      table,
      filters: args.filters.map(toFilter),
      limit: args.limit,
      offset: args.offset,
    });
    if ('error' in page) {
      if (page.error === 'noSuchColumn') {
        return ToolResult.error(
          `Error: column "${page.column}" is not available in table "${table}"; describe_tables lists its columns.`,
        );
      }
      return ToolResult.error(tableNotAvailable(args.table));
    }

    // One set of cells feeds both the text and the artifact, so the two can never disagree.
    const columns = [...page.columns];
    const masked = columns.map(isCredentialColumn);
    const cells = page.rows.map((row) =>
      row.map((cell, index) => (masked[index] ? MASKED_CELL : cell === null ? NULL_CELL : maskCell(cell))),
    );

    const first = args.offset + 1;
    const last = args.offset + cells.length;
    const lines: string[] = [];
    if (cells.length === 0) {
      lines.push(`Table "${table}": no rows at offset ${args.offset}${args.filters.length > 0 ? ' matching the filters' : ''}.`);
    } else {
      const more = page.hasMore ? ` More rows follow: call again with offset ${last}.` : ' No more rows.';
      lines.push(`Table "${table}": rows ${first}-${last} (limit ${args.limit}, offset ${args.offset}).${more}`);
    }
    const maskedNames = columns.filter((_column, index) => masked[index]);
    if (maskedNames.length > 0) lines.push(`Masked credential-like columns: ${maskedNames.join(', ')}.`);
    lines.push(`Each line below is a JSON array; the first names the columns; ${NULL_CELL} is an empty cell; long cells end with "…".`);
    lines.push(JSON.stringify(columns));
    for (const row of cells) lines.push(JSON.stringify(row));

    const label = cells.length === 0 ? `${table} (no rows)` : `${table} (rows ${first}-${last})`;
    return ToolResult.text(lines.join('\n'), tableArtifact(label, columns, cells));
  },
};

import { z } from 'zod';
import type { ColumnChange, RowUpdate, ToolData, UpdateRefusal } from '../data.ts';
import { ToolResult, tableArtifact } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingUser } from './actor-guard.ts';
import { capCell, isCredentialColumn, MASKED_CELL, maskCell } from '../../redaction/masking.ts';
import { NULL_CELL } from './read-records.ts';

/** Columns one call may change (the data layer enforces the same bound). */
export const MAX_CHANGES = 20;
/** Longest new value accepted, in characters. */
export const MAX_VALUE_CHARS = 10_000;
/** The preview's bounds (Tool.preview's contract): lines, and characters per line. */
export const MAX_PREVIEW_LINES = 20;
export const MAX_PREVIEW_LINE_CHARS = 500;
/** Longest value shown in a preview line (two fit on a line with the column name). */
const PREVIEW_VALUE_CHARS = 200;

const parameters = z.strictObject({
  table: z.string().min(1).max(128).describe('The table to change, as describe_tables lists it (e.g. "customers").'),
  key: z
    .strictObject({
      column: z.string().min(1).max(128).describe('A column that identifies the row, usually the primary key (e.g. "id").'),
      value: z
        .union([z.string().max(1_000), z.number()])
        .describe('The key value of the row, compared as text (e.g. "3"); it must match exactly one row.'),
    })
    .describe('Which row to change: the one row whose key column equals this value.'),
  changes: z
    .record(z.string().min(1).max(128), z.union([z.string().max(MAX_VALUE_CHARS), z.number(), z.boolean(), z.null()]))
    .refine((changes) => Object.keys(changes).length >= 1 && Object.keys(changes).length <= MAX_CHANGES, {
      message: `name 1 to ${MAX_CHANGES} columns`,
    })
    .describe(
      `Column → new value, 1 to ${MAX_CHANGES} columns, e.g. {"email": "ada@example.com"}. Values are text the database ` +
        'converts to the column type ("42", "true", "2025-01-31"); null clears the cell. The key column and ' +
        'credential-like columns cannot be changed.',
    )
    // The refinement is invisible to JSON Schema; these tell the model the same bound.
    .meta({ minProperties: 1, maxProperties: MAX_CHANGES }),
});

type Args = z.output<typeof parameters>;

/** The model may qualify the name with the schema it read about; the schema is always `records`. */
function unqualified(table: string): string {
  const trimmed = table.trim();
  return trimmed.toLowerCase().startsWith('records.') ? trimmed.slice('records.'.length) : trimmed;
}

function toUpdate(args: Args): RowUpdate {
  const changes: Record<string, string | null> = {};
  for (const [column, value] of Object.entries(args.changes)) changes[column] = value === null ? null : String(value);
  return { table: unqualified(args.table), key: { column: args.key.column, value: String(args.key.value) }, changes };
}

// Everything below that echoes a caller's name or value escapes line breaks and quotes, so a crafted
// value can never forge a line of the preview an approver reads.

/** Control characters (line breaks above all) escaped, so a text stays on one line. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A name as written in prose: bare when it is a plain identifier, JSON-quoted otherwise. */
function inlineName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(name) ? name : JSON.stringify(capCell(name, 128));
}

/** A key value as written in prose: bare when it is a plain token (`3`, `shipped`), JSON-quoted otherwise. */
function inlineValue(value: string): string {
  return /^[\w.:@+-]{1,100}$/.test(value) ? value : JSON.stringify(capCell(value, 100));
}

/** A cell in a change line: NULL, or the value with secret shapes masked, capped, JSON-quoted (as read_records shows cells). */
function shownValue(value: string | null, maxChars: number): string {
  return value === null ? NULL_CELL : JSON.stringify(maskCell(value, maxChars));
}

function keyPhrase(update: RowUpdate): string {
  return `${inlineName(update.key.column)} = ${inlineValue(update.key.value)}`;
}

/**
 * Why nothing was (or would be) changed, as one sentence without its end. A missing and an
 * ungranted table read the same, so a user cannot probe which tables exist.
 */
export function refusalReason(refusal: UpdateRefusal, update: RowUpdate): string {
  switch (refusal.error) {
    case 'noSuchTable':
    case 'notGranted':
      return `table ${JSON.stringify(update.table)} is not available for writing`;
    case 'noSuchColumn':
      return `column ${JSON.stringify(refusal.column)} is not available in table ${JSON.stringify(update.table)}`;
    case 'protectedColumn':
      if (refusal.reason === 'key') return `column ${JSON.stringify(refusal.column)} is the key and cannot be changed`;
      if (refusal.reason === 'readOnly') return `column ${JSON.stringify(refusal.column)} is read-only and cannot be changed`;
      return refusal.column === update.key.column
        ? `column ${JSON.stringify(refusal.column)} holds credentials and cannot be used as the key`
        : `column ${JSON.stringify(refusal.column)} holds credentials and cannot be changed`;
    case 'noRow':
      return `no row matches ${keyPhrase(update)}`;
    case 'manyRows':
      return `${refusal.count} rows match ${keyPhrase(update)}; the key must match exactly one row`;
    case 'invalidValue':
      return refusal.column === undefined
        ? `the database refused the change: ${oneLine(refusal.reason)}`
        : `the database refused the value of column ${JSON.stringify(refusal.column)}: ${oneLine(refusal.reason)}`;
    case 'changeCount':
      return `between 1 and ${MAX_CHANGES} columns must be changed, not ${refusal.count}`;
  }
}

function changeText(change: ColumnChange, maxChars: number): string {
  return `${inlineName(change.column)}: ${shownValue(change.before, maxChars)} → ${shownValue(change.after, maxChars)}`;
}

/**
 * The approver's view: a header, then one line per column. With more columns than lines, the last
 * line carries the rest, separated by `; `, with shorter values: nothing is left out silently.
 */
function previewLines(table: string, update: RowUpdate, changes: readonly ColumnChange[]): string[] {
  const room = MAX_PREVIEW_LINES - 1;
  const lines = [`Update table ${inlineName(table)} where ${keyPhrase(update)}:`];
  if (changes.length <= room) {
    for (const change of changes) lines.push(changeText(change, PREVIEW_VALUE_CHARS));
  } else {
    for (const change of changes.slice(0, room - 1)) lines.push(changeText(change, PREVIEW_VALUE_CHARS));
    const rest = changes.slice(room - 1);
    const shorter = Math.max(20, Math.floor(PREVIEW_VALUE_CHARS / rest.length));
    lines.push(rest.map((change) => changeText(change, shorter)).join('; '));
  }
  return lines.map((line) => capCell(oneLine(line), MAX_PREVIEW_LINE_CHARS));
}

/** Credential-like columns cannot be changed; masking here only guards against that rule ever slipping. */
function artifactCell(column: string, value: string | null): string {
  if (isCredentialColumn(column)) return MASKED_CELL;
  return value === null ? NULL_CELL : maskCell(value);
}

export const updateRecordTool: Tool<Args, ToolData> = {
  name: 'update_record',
  description:
    'Change columns of ONE row of a table of the records database, found by a key column (usually "id"). ' +
    'A person must approve every call before it runs. Call describe_tables and read_records first to find ' +
    'the table, the key and the current values. The key column and credential-like columns cannot be changed.',
  group: 'editing',
  parameters,
  enabledByDefault: false,
  requiresAdmin: false,
  effect: 'write',
  async execute(args, ctx) {
    const actor = actingUser(ctx);
    if (actor instanceof ToolResult) return actor;

    const update = toUpdate(args);
    const outcome = await ctx.data.records.updateRow(actor, update);
    if ('error' in outcome) return ToolResult.error(`Error: ${refusalReason(outcome, update)}. Nothing was changed.`);

    const where = `${inlineName(update.key.column)}=${inlineValue(update.key.value)}`;
    const summary = outcome.changes
      .map((change) => `${inlineName(change.column)} ${shownValue(change.before, 300)} → ${shownValue(change.after, 300)}`)
      .join(', ');
    const rows = outcome.changes.map((change) => [
      change.column,
      artifactCell(change.column, change.before),
      artifactCell(change.column, change.after),
    ]);
    return ToolResult.text(
      `Updated ${inlineName(update.table)} ${where}: ${summary}`,
      tableArtifact(`${update.table} ${where}`, ['column', 'before', 'after'], rows),
    );
  },
  async preview(args, ctx) {
    if (ctx.actor === null) return 'Preview unavailable: no signed-in user.';
    const update = toUpdate(args);
    const preview = await ctx.data.records.previewUpdate(ctx.actor, update);
    if ('error' in preview) return capCell(`Preview unavailable: ${refusalReason(preview, update)}.`, MAX_PREVIEW_LINE_CHARS);
    return previewLines(preview.table, update, preview.changes).join('\n');
  },
  async mayRun(args, ctx) {
    if (ctx.actor === null) return false;
    return ctx.data.records.mayWrite(ctx.actor, unqualified(args.table));
  },
};

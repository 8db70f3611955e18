import { z } from 'zod';
import { capCell, redactSecrets } from '../../redaction/masking.ts';
import { MAX_CONTENT_BYTES } from '../bounds.ts';
import type { ToolData } from '../data.ts';
import { ToolResult } from '../result.ts';
import { neutraliseControlTokens } from '../sanitize.ts';
import { neutraliseQuarantineTags, quarantine, quarantineOverheadBytes } from '../quarantine.ts';
import { TOOL_LOG_ORIGIN, TOOL_LOG_ORIGIN_FIELD, type Tool } from '../tool.ts';
import { actingAdmin } from './actor-guard.ts';

export const DEFAULT_LOG_LINES = 50;
export const MAX_LOG_LINES = 200;
/** Longest log line shown, in characters; a stack trace or a request dump beyond that is noise. */
export const MAX_LOG_LINE_CHARS = 2_000;
/** Longest message shown, in characters, before it is quoted. */
export const MAX_LOG_MESSAGE_CHARS = 1_000;
/** Longest field value shown, in characters, before it is quoted. */
export const MAX_LOG_FIELD_CHARS = 300;

/** What stands for an error's message, stack or cause: it stays in the server log. */
export const ERROR_DETAIL_OMITTED = '[error detail omitted]';
/** What stands for the text of a line a tool wrote through its own logger. */
export const TOOL_LOG_TEXT_OMITTED = '[tool log text omitted]';

/**
 * The fields of a log line that are shown (besides time, level and message), in this order: ids,
 * names and counts the service itself logs. Every other field is left out: a field nobody reviewed
 * may hold a request body, a prompt or a row.
 */
const SHOWN_FIELDS = ['tool', 'runId', 'callId', 'reason', 'status', 'kind', 'provider', 'timeoutMs', 'retentionDays', 'port'] as const;
/** Fields whose presence means "an error was logged here"; their content never reaches a result. */
const ERROR_FIELDS = ['err', 'error', 'errors', 'stack', 'cause'] as const;

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

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

/**
 * A value a user may control (a tool name a model chose, a configuration name, a call id), as the
 * model sees it: secrets masked, capped, JSON-quoted (so a line break or a quote cannot fake another
 * line or field) and with chat-template control tokens neutralised.
 */
function quoted(value: string, maxChars = MAX_LOG_FIELD_CHARS): string {
  return neutraliseControlTokens(JSON.stringify(capCell(redactSecrets(value), maxChars)));
}

function fieldValue(value: unknown): string | null {
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  // Objects and arrays are not shown: nobody reviewed what they hold.
  return null;
}

function timeOf(value: unknown): string | null {
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/**
 * One server log line as `fetch_logs` shows it, rebuilt from its JSON fields:
 * `<time> <LEVEL> "<message>" [error detail omitted] tool="…" runId="…" …`.
 * - error detail (`err`, `stack`, …, and a message that merely repeats the error's) is replaced by
 *   `[error detail omitted]`: a tool's exception may carry credentials or another user's data;
 * - the text of a line a tool wrote through its own logger is replaced by `[tool log text omitted]`;
 * - every string is quoted and neutralised (see `quoted`), every unknown field dropped.
 * A line that is not a JSON object is shown as one quoted string.
 */
export function renderLogLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    entry = undefined;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return capCell(`(unstructured) ${quoted(line, MAX_LOG_LINE_CHARS)}`, MAX_LOG_LINE_CHARS);
  }
  const fields = entry as Record<string, unknown>;
  const parts: string[] = [];
  const time = timeOf(fields.time);
  if (time) parts.push(time);
  parts.push(typeof fields.level === 'number' ? (LEVEL_NAMES[fields.level] ?? `LEVEL${fields.level}`) : 'LOG');

  const hasError = ERROR_FIELDS.some((name) => fields[name] !== undefined);
  const errorMessage = hasError ? (fields.err as { message?: unknown } | null)?.message : undefined;
  if (fields[TOOL_LOG_ORIGIN_FIELD] === TOOL_LOG_ORIGIN) parts.push(TOOL_LOG_TEXT_OMITTED);
  // pino makes an error's message the line's message when none is given: that is error detail too.
  else if (typeof fields.msg === 'string' && fields.msg !== errorMessage) parts.push(quoted(fields.msg, MAX_LOG_MESSAGE_CHARS));
  if (hasError) parts.push(ERROR_DETAIL_OMITTED);
  for (const name of SHOWN_FIELDS) {
    const value = name in fields ? fieldValue(fields[name]) : null;
    if (value !== null) parts.push(`${name}=${value}`);
  }
  return capCell(parts.join(' '), MAX_LOG_LINE_CHARS);
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * The whole result, ALWAYS in the quarantine envelope (log lines carry what users and models put
 * in them, whatever the configuration says) and within the seam's byte bound, so the seam passes it
 * unchanged and never cuts the envelope apart: when the lines do not all fit, the oldest are left out.
 */
function envelope(rendered: readonly string[]): string {
  const lines = rendered.map((line) => neutraliseQuarantineTags(line));
  const note = 'Values are quoted; error details and tools\' own log text stay in the server log.';
  const headerOf = (shown: number) => {
    const dropped = lines.length - shown;
    const left = dropped > 0 ? ` (${dropped} older line${dropped === 1 ? '' : 's'} left out to stay within ${MAX_CONTENT_BYTES} bytes)` : '';
    return `${shown} most recent log line${shown === 1 ? '' : 's'}, oldest first${left}. ${note}`;
  };
  // Room for the lines: the bound, less the envelope, the longest header and the line breaks.
  let room = MAX_CONTENT_BYTES - quarantineOverheadBytes - bytes(headerOf(0)) - 16;
  let first = lines.length;
  while (first > 0 && room - bytes(lines[first - 1]!) - 1 >= 0) {
    room -= bytes(lines[first - 1]!) + 1;
    first--;
  }
  let shown = lines.slice(first);
  let content = quarantine(neutraliseControlTokens([headerOf(shown.length), ...shown].join('\n')));
  // The estimate above is exact in practice; this keeps the promise if it ever is not.
  while (bytes(content) > MAX_CONTENT_BYTES && shown.length > 0) {
    shown = shown.slice(1);
    content = quarantine(neutraliseControlTokens([headerOf(shown.length), ...shown].join('\n')));
  }
  return content;
}

export const fetchLogsTool: Tool<Args, ToolData> = {
  name: 'fetch_logs',
  description:
    'Show the most recent server log lines, oldest first, with secrets redacted, values quoted and error details left out.',
  group: 'system',
  parameters,
  enabledByDefault: true,
  requiresAdmin: true,
  effect: 'read',
  async execute(args, ctx) {
    const admin = actingAdmin(ctx);
    if (admin instanceof ToolResult) return admin;
    const lines = ctx.data.recentLogs(Math.min(Math.max(1, args.limit), MAX_LOG_LINES)).map((line) => line.replace(/\r?\n$/, ''));
    if (lines.length === 0) return ToolResult.text(quarantine('No log lines recorded yet.'));
    return ToolResult.text(envelope(lines.map(renderLogLine)));
  },
};

import type { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError, type FieldIssue } from '../errors.ts';
import { isUniqueViolation } from '../db/errors.ts';

/**
 * Parses service input with zod; failures become a ValidationError listing field paths and
 * messages. Messages are built from the schema, never from the rejected values, so nothing a
 * client sent (possibly a secret) is echoed back.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const unstorable = unstorableInput(input);
  if (unstorable) return throwValidation(`Invalid input: ${unstorable.path.join('.') || '(input)'}: ${unstorable.message}`, [unstorable]);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String),
    message: issue.code === 'invalid_value' ? `must be one of: ${issue.values.map(String).join(', ')}` : issue.message,
  }));
  const summary = issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ');
  return throwValidation(`Invalid input: ${summary}`, issues);
}

/** Deepest nesting accepted in any service input, a JSON setting included (the artifact depth cap too). */
export const MAX_INPUT_DEPTH = 64;

// Node 20 has this (ES2024); the project's `lib` is ES2023.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();
const storableText = (text: string): boolean => !text.includes('\u0000') && isWellFormed(text);
const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired surrogates';

/**
 * What no service can store, whatever its schema says: text holding NUL (U+0000), which PostgreSQL
 * refuses in text and jsonb alike, or an unpaired UTF-16 surrogate, which jsonb refuses (and text
 * would silently replace); and nesting deeper than MAX_INPUT_DEPTH, which overflowed the stack of
 * JSON.stringify inside a schema check. Each reached the database (or the stack limit) and came back
 * as `Unexpected error.` (found by test/security/fuzz.test.ts). Checked BEFORE the schema, without
 * recursion; the first problem found is reported, by path, never by value.
 */
function unstorableInput(input: unknown): FieldIssue | null {
  const pending: { value: unknown; path: string[] }[] = [{ value: input, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path } = next;
    if (typeof value === 'string') {
      if (!storableText(value)) return { path, message: UNSTORABLE_TEXT };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_INPUT_DEPTH) return { path, message: `must not nest deeper than ${MAX_INPUT_DEPTH} levels` };
    for (const [key, item] of Object.entries(value)) {
      if (!storableText(key)) return { path, message: `keys ${UNSTORABLE_TEXT}` };
      pending.push({ value: item, path: [...path, key] });
    }
  }
  return null;
}

function throwValidation(message: string, issues: ValidationError['issues']): never {
  throw new ValidationError(message, issues);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A row id: anything that is not a UUID cannot name a row, so it is simply not found. */
export function requireId(what: string, id: string): string {
  if (!UUID.test(id)) throw new NotFoundError(what, id);
  return id;
}

export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** Runs a write and turns a unique-constraint violation into a ConflictError with the given message. */
export async function uniquely<T>(message: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError(message);
    throw error;
  }
}

type NullishShape<Shape extends z.ZodRawShape> = { [Key in keyof Shape]: z.ZodOptional<z.ZodNullable<Shape[Key]>> };

/**
 * Every field of `shape` made optional and nullable: the fields of an update input (absent or
 * null = leave unchanged, unless the service treats an explicit null as "clear"), and the optional
 * fields of a create input.
 */
export function nullishShape<Shape extends z.ZodRawShape>(shape: Shape): NullishShape<Shape> {
  const entries = Object.entries(shape).map(([key, schema]) => [key, (schema as z.ZodType).nullish()]);
  return Object.fromEntries(entries) as unknown as NullishShape<Shape>;
}

import type { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { isUniqueViolation } from '../db/errors.ts';

/**
 * Parses service input with zod; failures become a ValidationError listing field paths and
 * messages. Messages are built from the schema, never from the rejected values, so nothing a
 * client sent (possibly a secret) is echoed back.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String),
    message: issue.code === 'invalid_value' ? `must be one of: ${issue.values.map(String).join(', ')}` : issue.message,
  }));
  const summary = issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ');
  return throwValidation(`Invalid input: ${summary}`, issues);
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

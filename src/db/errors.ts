/** True when a PostgreSQL (or PGlite) error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/** True when a PostgreSQL (or PGlite) error is a foreign-key violation (SQLSTATE 23503). */
export function isForeignKeyViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that can name a row of a uuid column; anything else would make PostgreSQL raise 22P02. */
export function onlyUuids(ids: readonly string[]): string[] {
  return ids.filter((id) => UUID.test(id));
}

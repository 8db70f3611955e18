import { fileURLToPath } from 'node:url';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, type Kysely, type MigrationResult, Migrator, NO_MIGRATIONS } from 'kysely';

/** The committed migrations folder, resolved from this file so it works from any working directory. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

function check(results: MigrationResult[] | undefined, error: unknown): MigrationResult[] {
  if (error) {
    const failed = results?.find((result) => result.status === 'Error');
    const where = failed ? ` in ${failed.migrationName}` : '';
    throw new MigrationError(`Migration failed${where}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return results ?? [];
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { results, error } = await createMigrator(db).migrateToLatest();
  return check(results, error).map((result) => result.migrationName);
}

/** Reverts every applied migration, newest first (each has a real `down`). */
export async function migrateDownAll(db: Kysely<any>): Promise<string[]> {
  const { results, error } = await createMigrator(db).migrateTo(NO_MIGRATIONS);
  return check(results, error).map((result) => result.migrationName);
}

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Kysely, type Migration, type MigrationProvider, type MigrationResult, Migrator, NO_MIGRATIONS } from 'kysely';

/** The committed migrations folder, resolved from this file so it works from any working directory. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** `.ts` in the repository, `.js` in the build (`dist/migrations`); the name excludes the extension. */
const MIGRATION_FILE = /^(\d{14}_[a-z0-9-]+)\.(ts|js)$/;

/**
 * Reads `migrations/<UTC stamp>_<verb-noun>.ts` (or the `.js` build of it). Kysely's
 * FileMigrationProvider imports from inside node_modules, where neither tsx nor vitest transforms
 * TypeScript; importing from here does.
 */
const folderProvider: MigrationProvider = {
  async getMigrations() {
    const files = (await readdir(MIGRATIONS_DIR)).filter((file) => MIGRATION_FILE.test(file)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const name = MIGRATION_FILE.exec(file)![1]!;
      migrations[name] = (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as Migration;
    }
    return migrations;
  },
};

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: folderProvider });
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

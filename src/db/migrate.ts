import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Kysely, type Migration, type MigrationProvider, type MigrationResult, Migrator, NO_MIGRATIONS, sql } from 'kysely';

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
    const migrations: Record<string, Migration> = {};
    for (const { name, file } of await migrationFiles()) {
      migrations[name] = (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as Migration;
    }
    return migrations;
  },
};

/** The folder's migrations in order: each one's name and file. */
async function migrationFiles(): Promise<{ name: string; file: string }[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((file) => MIGRATION_FILE.test(file)).sort();
  return files.map((file) => ({ name: MIGRATION_FILE.exec(file)![1]!, file }));
}

/**
 * A digest of the folder's migrations, names and contents: what a database migrated from this folder
 * holds. The embedded template (src/db/create-db.ts) keeps one beside its migrated cluster and is used
 * only while the folder still has the same digest (a migration added or edited since: the pristine
 * cluster, migrated at the start as always).
 */
export async function migrationsDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const { file } of await migrationFiles()) hash.update(`${file}\0`).update(await readFile(path.join(MIGRATIONS_DIR, file))).update('\0');
  return hash.digest('hex');
}

/**
 * True when the database has applied exactly the folder's migrations, read in two statements.
 * Kysely's migrator finds its tables through the catalogue, takes its lock and imports every file
 * even when nothing is pending: 0.6–1.2 s of every start on the embedded database. Anything else
 * (a new database, a pending migration, one applied that the folder lacks) goes to the migrator,
 * which applies or refuses as before.
 */
async function upToDate(db: Kysely<any>): Promise<boolean> {
  const table = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!table.rows[0]?.present) return false;
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const names = (await migrationFiles()).map(({ name }) => name);
  return applied.rows.length === names.length && applied.rows.every((row, index) => row.name === names[index]);
}

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
  if (await upToDate(db)) return [];
  const { results, error } = await createMigrator(db).migrateToLatest();
  return check(results, error).map((result) => result.migrationName);
}

/** Reverts every applied migration, newest first (each has a real `down`). */
export async function migrateDownAll(db: Kysely<any>): Promise<string[]> {
  const { results, error } = await createMigrator(db).migrateTo(NO_MIGRATIONS);
  return check(results, error).map((result) => result.migrationName);
}

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb, type DbHandle, type DbKind } from '../../src/db/create-db.ts';
import { migrateToLatest, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import { pgliteMigratedTemplate, pgliteTemplate } from './pglite-template.ts';

/**
 * The databases every database test runs against: PGlite always, PostgreSQL too when
 * TEST_DATABASE_URL is set (CI sets it). Use with `describe.each(TEST_DATABASES)`.
 */
export const TEST_DATABASES: readonly DbKind[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/** The names of the committed migrations, in order, read from the folder (what a database at the latest schema has applied). */
export function migrationNamesInFolder(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{14}_.*\.(ts|js)$/.test(file))
    .map((file) => file.replace(/\.(ts|js)$/, ''))
    .sort();
}

export interface TestDatabase {
  readonly kind: DbKind;
  /** PGlite data directory (`memory://` unless persistent); null for PostgreSQL. */
  readonly dataDir: string | null;
  /** PostgreSQL URL of the private database (null for PGlite). */
  readonly databaseUrl: string | null;
  /** Opens (another) handle on the same database; the caller closes it. */
  open(): Promise<DbHandle>;
  /** Drops the private database (PostgreSQL); call after every handle is closed. */
  drop(): Promise<void>;
}

async function withAdminClient<T>(action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/**
 * A private, empty database for one test file. PGlite: in memory, or in a temporary directory that
 * survives closing when `persistent` (to test restarts); `migrated` opens an in-memory one already
 * at the latest schema. PostgreSQL: a fresh database on the test server (always persistent).
 */
export async function createTestDatabase(kind: DbKind, options: { persistent?: boolean; migrated?: boolean } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const dataDir = options.persistent ? mkdtempSync(path.join(tmpdir(), 'airlock-test-')) : 'memory://';
    const template = options.migrated ? pgliteMigratedTemplate : pgliteTemplate;
    return {
      kind,
      dataDir,
      databaseUrl: null,
      // A file directory is opened as it is (it may hold a database from an earlier open).
      open: () => createDb({ databaseUrl: null, dataDir, ...(dataDir === 'memory://' ? { pgliteTemplate: template() } : {}) }),
      drop: async () => {
        if (dataDir !== 'memory://') rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: PostgreSQL tests need it.');
  const name = `airlock_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind,
    dataDir: null,
    databaseUrl,
    open: () => createDb({ databaseUrl, dataDir: 'memory://', poolSize: 5 }),
    drop: () => withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A migrated private database and an open handle on it; `dispose` closes and drops it. */
export async function openMigratedDb(kind: DbKind): Promise<{ handle: DbHandle; database: TestDatabase; dispose(): Promise<void> }> {
  const database = await createTestDatabase(kind, { migrated: true });
  const handle = await database.open();
  await migrateToLatest(handle.db);
  return {
    handle,
    database,
    async dispose() {
      await handle.close();
      await database.drop();
    },
  };
}

import { spawn } from 'node:child_process';
import { once as onceEvent } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.ts';
import { migrateToLatest, migrationsDigest } from './migrate.ts';
import { openPGliteThread, type PGliteThread } from './pglite-thread.ts';
import type { Database, Db } from './database.ts';

export type DbKind = 'postgres' | 'pglite';

export interface DbHandle {
  readonly db: Db;
  readonly kind: DbKind;
  /**
   * An embedded database in a data directory, locked by this process: no other process can have it
   * open, so every run another process left RUNNING in it is orphaned (durable runs continue them at start).
   */
  readonly exclusive?: boolean;
  /** Closes the pool or the embedded database; safe to call twice. */
  close(): Promise<void>;
}

export interface DbOptions {
  /** PostgreSQL URL; null selects the embedded PGlite database. */
  readonly databaseUrl: string | null;
  /** PGlite data directory, or `memory://` for a throwaway database. */
  readonly dataDir: string;
  /** Optional pool size for PostgreSQL (default 10). */
  readonly poolSize?: number;
  /**
   * A PGlite data-directory dump (`dumpDataDir`) to start a NEW database from instead of running
   * initdb, which costs seconds; the test suite uses one per worker. Ignored for PostgreSQL.
   */
  readonly pgliteTemplate?: Blob;
  /**
   * A template folder (writeClusterTemplate) to create a NEW embedded cluster from: its cluster
   * copied for a data directory (a fraction of a second; initdb takes about four), its dump loaded
   * for `memory://`. Default: the one `npm ci` leaves (installedClusterTemplate); null: none. A
   * missing, incomplete or unusable template only means initdb runs instead.
   */
  readonly clusterTemplate?: string | null;
}

const INT8_OID = 20;

/**
 * How the server starts the embedded database: PGlite's own parameters and these, 16 MB of shared
 * buffers instead of PostgreSQL's 128 MB. PGlite touches its whole buffer pool when it starts, so the pool is
 * resident memory from the first second (about 120 MB of a newcomer's first start); the embedded
 * database is small, and what falls out of the pool is read back from the operating system's cache.
 * A deployment that outgrows this is one for PostgreSQL (DATABASE_URL).
 */
export const PGLITE_START_PARAMS: readonly string[] = ['-c', 'shared_buffers=16MB'];

/**
 * bigint (token totals, counts, sums cast to bigint) read as PGlite reads it: a number while it is
 * a safe integer, a BigInt beyond (never silently rounded). `pg` alone reads it as a string, which
 * `+` would concatenate. Operator data is not concerned: the data tools read every cell as text.
 */
export function parseInt8(text: string): number | bigint {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : BigInt(text);
}

const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Opens the database the configuration names. The caller owns the handle and must close it. */
export async function createDb(options: DbOptions): Promise<DbHandle> {
  if (options.databaseUrl !== null) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10, types: pgTypes });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    // Nor may a checked-out one: its query fails on its own, then the pool drops it on release. pg
    // also emits 'error' on such a client, and the pool listens only while a client is idle.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: once(() => db.destroy()) };
  }
  const dataPath = options.dataDir === 'memory://' ? 'memory://' : `${options.dataDir.replace(/\/+$/, '')}/pglite`;
  // Looked up only when a new cluster is made without a dump (a restart reads nothing).
  const clusterTemplate = () => (options.clusterTemplate === undefined ? installedClusterTemplate() : options.clusterTemplate);
  if (dataPath === 'memory://') {
    const open = (dump: Blob | string | undefined) => openPGlite(dataPath, dump);
    const template = options.pgliteTemplate ? null : clusterTemplate();
    // The dump's file, read by the database's thread (never a copy in this one).
    const installed = template === null ? null : existingFile(path.join(template, (await migratedIsCurrent(template)) ? TEMPLATE_MIGRATED_DUMP : TEMPLATE_DUMP));
    const client = installed
      ? await open(installed).catch(async (error: unknown) => {
          // Said, not swallowed: the way round takes seconds and several times the memory.
          console.error(`Airlock: the installed database template (${installed}) did not open (${error instanceof Error ? error.message : String(error)}); creating a new database with initdb instead. Run npm ci again to rebuild the template.`);
          return open((await initdbInChild('memory://')).dump);
        })
      : await open(options.pgliteTemplate ?? (await initdbInChild('memory://')).dump);
    const db = new Kysely<Database>({ dialect: pgliteDialect(client) });
    return { db, kind: 'pglite', close: once(() => db.destroy()) };
  }
  mkdirSync(path.dirname(dataPath), { recursive: true });
  // Taken before anything inside is touched: a refused process leaves the directory as it was.
  const lock = lockDataDir(path.dirname(dataPath));
  try {
    mkdirSync(dataPath, { recursive: true });
    let client: PGliteThread;
    if (options.pgliteTemplate || existsSync(path.join(dataPath, 'PG_VERSION'))) {
      client = await openPGlite(dataPath, options.pgliteTemplate);
    } else {
      // A new cluster: a copy of the installed template's (a file copy, a fraction of a second), else
      // one made by initdb in a child process, else (that failing too) by this process.
      const template = clusterTemplate();
      const copied = template !== null && (await copyTemplateCluster(template, emptied(dataPath)));
      const created = copied || (await initdbInChild(emptied(dataPath))).ok;
      if (!created) emptied(dataPath);
      client = await openPGlite(dataPath, undefined).catch(async (error: unknown) => {
        if (!copied) throw error;
        // The template's copy does not open (a damaged cache): initdb after all.
        if (!(await initdbInChild(emptied(dataPath))).ok) emptied(dataPath);
        return openPGlite(dataPath, undefined);
      });
    }
    const db = new Kysely<Database>({ dialect: pgliteDialect(client) });
    return { db, kind: 'pglite', exclusive: true, close: once(() => db.destroy().finally(() => lock.release())) };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** The server's PGlite (PGLITE_START_PARAMS) in a thread of its own, from `dump` (a Blob or a file) when one is given. */
function openPGlite(dataPath: string, dump: Blob | string | undefined): Promise<PGliteThread> {
  return openPGliteThread(dataPath, { startParams: PGLITE_START_PARAMS, ...(dump ? { dump } : {}) });
}

/** kysely-pglite-dialect over the thread: the dialect calls `query(sql, params)` and `close()` only. */
const pgliteDialect = (client: PGliteThread) => new PGliteDialect(client as unknown as PGlite);

/** A directory made empty (what a failed attempt at creating a cluster left is removed). */
function emptied(directory: string): string {
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  return directory;
}

/**
 * In a template folder: the pristine cluster and its dump (for memory://); the same cluster migrated
 * to the latest schema, its dump, and the digest of the migrations it holds; the mark of a complete one.
 */
const TEMPLATE_CLUSTER = 'cluster';
const TEMPLATE_DUMP = 'cluster.tar';
const TEMPLATE_MIGRATED = 'migrated';
const TEMPLATE_MIGRATED_DUMP = 'migrated.tar';
const TEMPLATE_MIGRATED_DIGEST = 'migrated.digest';
const TEMPLATE_READY = 'ready';

/**
 * Where `npm ci` leaves a pristine cluster (postinstall: src/db/template-cli.ts), next to the PGlite
 * it was made with and named by its version, so that another PGlite never uses it.
 */
export function installedClusterTemplate(): string {
  const pglitePackage = fileURLToPath(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')));
  const { version } = JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string };
  const nodeModules = path.dirname(path.dirname(path.dirname(pglitePackage)));
  return path.join(nodeModules, '.cache', 'airlock', `pglite-${version}`);
}

/**
 * Whether the template's migrated cluster holds exactly the migrations of this checkout: then a new
 * database starts from it, and the start finds nothing to migrate (the 24 migrations took 1.2–1.6 s
 * of a first embedded start). A template without one (an older install) or from other migrations
 * gives its pristine cluster, migrated at the start as before.
 */
async function migratedIsCurrent(template: string): Promise<boolean> {
  try {
    return readFileSync(path.join(template, TEMPLATE_MIGRATED_DIGEST), 'utf8').trim() === (await migrationsDigest());
  } catch {
    return false;
  }
}

/** Copies the template's cluster into `target`; false (nothing copied) when there is no complete one. */
async function copyTemplateCluster(template: string, target: string): Promise<boolean> {
  if (!existsSync(path.join(template, TEMPLATE_READY))) return false;
  try {
    cpSync(path.join(template, (await migratedIsCurrent(template)) ? TEMPLATE_MIGRATED : TEMPLATE_CLUSTER), target, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

const existingFile = (file: string): string | null => (existsSync(file) ? file : null);

/**
 * Writes a template folder at `folder`: a pristine cluster made by initdb in a child process and its
 * dump, then a copy of it migrated to the latest schema, its dump and the digest of its migrations.
 * Made under a temporary name, then renamed, so that a reader never sees half of one.
 */
export async function writeClusterTemplate(folder: string = installedClusterTemplate()): Promise<void> {
  const partial = `${folder}.${process.pid}.partial`;
  emptied(partial);
  try {
    const { ok } = await initdbInChild(path.join(partial, TEMPLATE_CLUSTER), path.join(partial, TEMPLATE_DUMP));
    if (!ok) throw new Error('initdb did not create a cluster (see its output above)');
    const migrated = path.join(partial, TEMPLATE_MIGRATED);
    cpSync(path.join(partial, TEMPLATE_CLUSTER), migrated, { recursive: true });
    const digest = await migrationsDigest();
    const client = await openPGlite(migrated, undefined);
    const db = new Kysely<Database>({ dialect: pgliteDialect(client) });
    try {
      await migrateToLatest(db);
      writeFileSync(path.join(partial, TEMPLATE_MIGRATED_DUMP), Buffer.from(await client.dump()));
    } finally {
      await db.destroy();
    }
    writeFileSync(path.join(partial, TEMPLATE_MIGRATED_DIGEST), `${digest}\n`);
    writeFileSync(path.join(partial, TEMPLATE_READY), `${new Date().toISOString()}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(partial, folder);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * The program of the initdb child: plain JavaScript (no TypeScript loader to start), the PGlite
 * module by its resolved URL (whatever the working directory). Arguments: the target (a directory, or
 * `memory://`) and the file to write the cluster's dump to (optional).
 */
const INITDB_PROGRAM = (pglite: string) => `
const [target, dumpFile] = process.argv.slice(1);
try {
  const { PGlite } = await import(${JSON.stringify(pglite)});
  const { writeFile } = await import('node:fs/promises');
  const client = await PGlite.create(target);
  if (dumpFile) await writeFile(dumpFile, Buffer.from(await (await client.dumpDataDir('none')).arrayBuffer()));
  await client.close();
} catch (error) {
  // One line, not Node's report of an uncaught error (which quotes PGlite's minified source).
  console.error('Airlock: the embedded database could not be created by initdb (' + (error instanceof Error ? error.message : String(error)) + '); trying another way.');
  process.exit(1);
}
`;

/**
 * Runs initdb in a short-lived child process, so that this process never holds its memory: PGlite's
 * WebAssembly heap grows to about 800 MB while it creates a cluster and never gives it back, while
 * opening an existing one needs about a third of that. For a directory, the cluster is left there
 * (and its dump written to `dumpFile` when one is named); for `memory://`, its dump is returned to
 * load. `ok` is false when the child could not do it: the caller then creates the cluster itself, as
 * before (holding initdb's memory, never wrong).
 */
export async function initdbInChild(target: string, dumpFile?: string): Promise<{ ok: boolean; dump?: Blob }> {
  const scratch = target === 'memory://' ? mkdtempSync(path.join(tmpdir(), 'airlock-initdb-')) : null;
  const dumpTo = scratch ? path.join(scratch, 'cluster.tar') : (dumpFile ?? '');
  try {
    const program = INITDB_PROGRAM(import.meta.resolve('@electric-sql/pglite'));
    const child = spawn(process.execPath, ['--input-type=module', '-e', program, target, dumpTo], { stdio: ['ignore', 'inherit', 'inherit'] });
    const [code] = (await onceEvent(child, 'exit')) as [number | null];
    if (code !== 0) return { ok: false };
    return scratch ? { ok: true, dump: new Blob([readFileSync(dumpTo)]) } : { ok: true };
  } catch {
    return { ok: false };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

function once(action: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null;
  return () => (done ??= action());
}

import { spawn } from 'node:child_process';
import { once as onceEvent } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.ts';
import type { Database, Db } from './database.ts';

export type DbKind = 'postgres' | 'pglite';

export interface DbHandle {
  readonly db: Db;
  readonly kind: DbKind;
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
   * A file holding a pristine cluster's dump, to create a NEW embedded cluster from (loading it takes
   * about a second, initdb about four): default the one `npm ci` leaves (installedClusterTemplate);
   * null: none. A missing or unusable file only means initdb runs instead.
   */
  readonly clusterTemplate?: string | null;
}

const INT8_OID = 20;

/**
 * How the server starts the embedded database: PGlite's own parameters, with 16 MB of shared buffers
 * instead of PostgreSQL's 128 MB. PGlite touches its whole buffer pool when it starts, so the pool is
 * resident memory from the first second (about 120 MB of a newcomer's first start); the embedded
 * database is small, and what falls out of the pool is read back from the operating system's cache.
 * A deployment that outgrows this is one for PostgreSQL (DATABASE_URL).
 */
export const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

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
    const open = (dump: Blob | undefined) => openPGlite(dataPath, dump);
    const installed = options.pgliteTemplate ? null : readTemplate(clusterTemplate());
    const client = installed
      ? await open(installed).catch(async () => open((await initdbInChild('memory://')).dump))
      : await open(options.pgliteTemplate ?? (await initdbInChild('memory://')).dump);
    const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
    return { db, kind: 'pglite', close: once(() => db.destroy()) };
  }
  mkdirSync(path.dirname(dataPath), { recursive: true });
  // Taken before anything inside is touched: a refused process leaves the directory as it was.
  const lock = lockDataDir(path.dirname(dataPath));
  try {
    mkdirSync(dataPath, { recursive: true });
    // A new cluster is created by a child process (initdbInChild) — from the installed template when
    // there is one, else by initdb — unless a dump is given.
    if (!options.pgliteTemplate && !existsSync(path.join(dataPath, 'PG_VERSION'))) {
      const file = clusterTemplate();
      const template = file !== null && existsSync(file) ? file : undefined;
      const created = (template && (await initdbInChild(dataPath, template)).ok) || (await initdbInChild(emptied(dataPath))).ok;
      // Whatever the children left is not a cluster: this process creates it from nothing.
      if (!created) emptied(dataPath);
    }
    const client = await openPGlite(dataPath, options.pgliteTemplate);
    const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
    return { db, kind: 'pglite', close: once(() => db.destroy().finally(() => lock.release())) };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** The server's PGlite (PGLITE_START_PARAMS), from `dump` when one is given. */
function openPGlite(dataPath: string, dump: Blob | undefined): Promise<PGlite> {
  return PGlite.create(dataPath, { startParams: [...PGLITE_START_PARAMS], ...(dump ? { loadDataDir: dump } : {}) });
}

/** A directory made empty (what a failed attempt at creating a cluster left is removed). */
function emptied(directory: string): string {
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  return directory;
}

/**
 * Where `npm ci` leaves a pristine cluster's dump (postinstall: src/db/template-cli.ts), next to the
 * PGlite it was made with and named by its version, so that another PGlite never loads it.
 */
export function installedClusterTemplate(): string {
  const pglitePackage = fileURLToPath(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')));
  const { version } = JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string };
  const nodeModules = path.dirname(path.dirname(path.dirname(pglitePackage)));
  return path.join(nodeModules, '.cache', 'airlock', `pglite-${version}.tar`);
}

const readTemplate = (file: string | null): Blob | null => {
  try {
    return file === null ? null : new Blob([readFileSync(file)]);
  } catch {
    return null;
  }
};

/**
 * Writes a pristine cluster's dump to `file` (made by initdb in a child process; written to a
 * temporary name, then renamed, so that a reader never sees half a file).
 */
export async function writeClusterTemplate(file: string = installedClusterTemplate()): Promise<void> {
  const { ok, dump } = await initdbInChild('memory://');
  if (!ok || !dump) throw new Error('initdb did not create a cluster (see its output above)');
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
}

/**
 * The program of the initdb child: plain JavaScript (no TypeScript loader to start), the PGlite
 * module by its resolved URL (whatever the working directory). Arguments: the target (a directory, or
 * `memory://`), the file to write the cluster's dump to (for `memory://`; else empty), and the dump
 * to create the cluster from instead of running initdb (optional).
 */
const INITDB_PROGRAM = (pglite: string) => `
const [target, dumpFile, templateFile] = process.argv.slice(1);
try {
  const { PGlite } = await import(${JSON.stringify(pglite)});
  const { readFile, writeFile } = await import('node:fs/promises');
  const client = await PGlite.create(target, templateFile ? { loadDataDir: new Blob([await readFile(templateFile)]) } : {});
  if (dumpFile) await writeFile(dumpFile, Buffer.from(await (await client.dumpDataDir('none')).arrayBuffer()));
  await client.close();
} catch (error) {
  // One line, not Node's report of an uncaught error (which quotes PGlite's minified source).
  const how = templateFile ? 'from the template ' + templateFile : 'by initdb';
  console.error('Airlock: the embedded database could not be created ' + how + ' (' + (error instanceof Error ? error.message : String(error)) + '); trying another way.');
  process.exit(1);
}
`;

/**
 * Runs initdb in a short-lived child process, so that this process never holds its memory: PGlite's
 * WebAssembly heap grows to about 800 MB while it creates a cluster and never gives it back, while
 * opening an existing one needs about a third of that. With `templateFile` (a pristine cluster's
 * dump) the cluster is loaded from it instead of made by initdb. For a directory, the cluster is left
 * there; for `memory://`, its dump is returned to load. `ok` is false when the child could not do it: the
 * caller then creates the cluster itself, as before (holding initdb's memory, never wrong).
 */
export async function initdbInChild(target: string, templateFile?: string): Promise<{ ok: boolean; dump?: Blob }> {
  const scratch = target === 'memory://' ? mkdtempSync(path.join(tmpdir(), 'airlock-initdb-')) : null;
  const dumpFile = scratch ? path.join(scratch, 'cluster.tar') : null;
  try {
    const program = INITDB_PROGRAM(import.meta.resolve('@electric-sql/pglite'));
    const args = [target, dumpFile ?? '', ...(templateFile ? [templateFile] : [])];
    const child = spawn(process.execPath, ['--input-type=module', '-e', program, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    const [code] = (await onceEvent(child, 'exit')) as [number | null];
    if (code !== 0) return { ok: false };
    return dumpFile ? { ok: true, dump: new Blob([readFileSync(dumpFile)]) } : { ok: true };
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

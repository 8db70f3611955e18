import { readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { migrateToLatest } from '../../src/db/migrate.ts';

// initdb inside PGlite takes several seconds on a small machine, and the migrations another one and
// a half on every new database; clusters made once and loaded by every test database take about
// one. Two dumps: an EMPTY cluster (what migration tests and `createTestDatabase` begin from) and
// the same cluster migrated to the latest schema (what a test app or handle needs and nothing more:
// no admin, no rows a start adds).

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplateFile: string;
    pgliteMigratedTemplateFile: string;
  }
}

/** Vitest global setup: writes both dumps once per test run and removes them afterwards. */
export default async function setup(project: TestProject): Promise<() => void> {
  const empty = path.join(tmpdir(), `airlock-pglite-template-${process.pid}.tar`);
  const migrated = path.join(tmpdir(), `airlock-pglite-migrated-${process.pid}.tar`);
  const client = await PGlite.create('memory://');
  const dump = async (file: string) => writeFile(file, Buffer.from(await (await client.dumpDataDir('none')).arrayBuffer()));
  await dump(empty);
  const db = new Kysely<unknown>({ dialect: new PGliteDialect(client) });
  await migrateToLatest(db);
  await dump(migrated);
  await db.destroy();
  project.provide('pgliteTemplateFile', empty);
  project.provide('pgliteMigratedTemplateFile', migrated);
  return () => {
    rmSync(empty, { force: true });
    rmSync(migrated, { force: true });
  };
}

const cached = new Map<string, Blob>();
const loaded = (file: string): Blob => {
  if (!cached.has(file)) cached.set(file, new Blob([readFileSync(file)]));
  return cached.get(file)!;
};

/** The empty-cluster dump of this run, loaded once per worker. */
export function pgliteTemplate(): Blob {
  return loaded(inject('pgliteTemplateFile'));
}

/** The cluster migrated to the latest schema, loaded once per worker. */
export function pgliteMigratedTemplate(): Blob {
  return loaded(inject('pgliteMigratedTemplateFile'));
}

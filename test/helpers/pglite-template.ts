import { readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';

// initdb inside PGlite takes several seconds on a small machine; a fresh cluster dumped once and
// loaded by every test database takes about one. The dump is an EMPTY cluster (no migrations),
// so migration tests still start from nothing.

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplateFile: string;
  }
}

/** Vitest global setup: writes the template once per test run and removes it afterwards. */
export default async function setup(project: TestProject): Promise<() => void> {
  const file = path.join(tmpdir(), `airlock-pglite-template-${process.pid}.tar`);
  const client = await PGlite.create('memory://');
  const dump = await client.dumpDataDir('none');
  await client.close();
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplateFile', file);
  return () => rmSync(file, { force: true });
}

let cached: Blob | undefined;

/** The empty-cluster dump of this run, loaded once per worker. */
export function pgliteTemplate(): Blob {
  cached ??= new Blob([readFileSync(inject('pgliteTemplateFile'))]);
  return cached;
}

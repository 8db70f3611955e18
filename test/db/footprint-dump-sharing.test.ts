import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedClusterTemplate } from '../../src/db/create-db.ts';
import { openPGliteThread } from '../../src/db/pglite-thread.ts';

/** The files of an uncompressed tar, by name (leading slash removed). */
function tarFiles(tar: Uint8Array): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const buffer = Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength);
  const field = (start: number, length: number) => buffer.toString('latin1', start, start + length).replace(/\0.*$/s, '');
  for (let offset = 0; offset + 512 <= buffer.length; ) {
    if (buffer.subarray(offset, offset + 512).every((byte) => byte === 0)) break;
    const name = field(offset, 100).replace(/^\/+/, '');
    const size = parseInt(field(offset + 124, 12).trim(), 8) || 0;
    if (buffer[offset + 156] === 48 || buffer[offset + 156] === 0) files.set(name, buffer.subarray(offset + 512, offset + 512 + size));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/**
 * A dump's identical files (template0's, template1's and postgres's catalogs) share one copy of
 * their bytes in the memory:// database (pglite-dump-loading.ts): a write into one must not reach the others.
 */
describe('identical files of a memory:// dump', () => {
  const pristine = path.join(installedClusterTemplate(), 'cluster.tar');

  for (const form of ['file', 'Blob'] as const) {
    it(`should share their bytes and copy a file before its first write (dump as a ${form})`, async () => {
      const bytes = readFileSync(pristine);
      const before = tarFiles(bytes);
      // pg_class of postgres (5) is that of template1 (1) in a fresh cluster.
      expect(before.get('base/5/1259')?.equals(before.get('base/1/1259')!)).toBe(true);
      const client = await openPGliteThread('memory://', { startParams: [], dump: form === 'file' ? pristine : new Blob([bytes]) });
      try {
        await client.query('create table footprint_marker (value text)');
        await client.query(`insert into footprint_marker values ('written')`);
        await client.query('checkpoint');
        const after = tarFiles(new Uint8Array(await client.dump()));
        // The database written changed; template0 and template1 kept their bytes, file for file.
        expect(after.get('base/5/1259')?.equals(before.get('base/5/1259')!)).toBe(false);
        for (const [name, content] of before) {
          if (name.startsWith('base/1/') || name.startsWith('base/4/')) expect(after.get(name)?.equals(content), name).toBe(true);
        }
        expect((await client.query('select value from footprint_marker')).rows).toEqual([{ value: 'written' }]);
      } finally {
        await client.close();
      }
    }, 60_000);
  }
});

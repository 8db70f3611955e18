/**
 * How the database's thread (pglite-thread.ts) loads a dump: plain JavaScript, part of the thread's
 * program, where `await dumpOptions(PGlite, MemoryFS, dataPath, dump)` gives the options of
 * `PGlite.create` (none without a dump).
 *
 * PGlite's own `loadDataDir` held four copies of a dump at once — the Blob, its ArrayBuffer, every
 * file sliced out of that by its tar reader, and the in-memory file system's copy of each — and the
 * memory stayed with the process: `memory://` started at about 530 MiB RSS against 265 for a data
 * directory (the footprint workload, 2026-12-05). For `memory://` the thread reads the dump once,
 * into zero-filled memory whose pages of zeros it leaves untouched (a fresh large allocation takes
 * no RAM until written: 11 of the 39 MiB, mostly the unused end of the WAL segment), and writes each
 * file into the in-memory file system as a view of that copy (Emscripten's `canOwn`: MEMFS keeps the
 * view and copies a file only when PostgreSQL grows it) before PostgreSQL starts, so that PGlite
 * finds an existing cluster. The archive is read as PGlite's reader (tinytar) reads it: the name
 * field, octal size and modification time, type 5 a directory and 0 a file, other entries skipped;
 * a header that is not intact rejects the opening. A dump for a directory, or one that is no plain
 * tar (compressed, or no dump at all), goes to PGlite's `loadDataDir` as before.
 */
export const DUMP_LOADING = `
const { closeSync, fstatSync, openSync, readSync } = require('node:fs');
const TAR_BLOCK = 512;
const isPlainTar = (tar) => tar.length >= TAR_BLOCK && String.fromCharCode(...tar.subarray(257, 262)) === 'ustar';
const tarField = (tar, start, length) => {
  let end = start;
  while (end < start + length && tar[end] !== 0) end++;
  return String.fromCharCode(...tar.subarray(start, end));
};
// The ustar magic, and the header's checksum: the sum of its bytes, the checksum field's counted as spaces.
const tarHeaderIntact = (tar, offset) => {
  if (tarField(tar, offset + 257, 5) !== 'ustar') return false;
  let sum = 0;
  for (let index = 0; index < TAR_BLOCK; index++) sum += index >= 148 && index < 156 ? 32 : tar[offset + index];
  return sum === parseInt(tarField(tar, offset + 148, 8).trim(), 8);
};
const unpackTar = (FS, tar, root) => {
  for (let offset = 0; offset < tar.length; ) {
    if (offset + TAR_BLOCK > tar.length) throw new Error('the dump is damaged: it ends inside a tar header');
    // The blocks of zeros that end an archive.
    if (tar.subarray(offset, offset + TAR_BLOCK).every((byte) => byte === 0)) break;
    if (!tarHeaderIntact(tar, offset)) throw new Error('the dump is damaged: no intact tar header at byte ' + offset);
    const name = tarField(tar, offset, 100).replace(/^\\/+/, '');
    const size = parseInt(tarField(tar, offset + 124, 12).trim(), 8) || 0;
    const type = (parseInt(String.fromCharCode(tar[offset + 156]), 10) || 0) % 8;
    const data = offset + TAR_BLOCK;
    if (data + size > tar.length) throw new Error('the dump is damaged: ' + name + ' is cut short');
    const path = root + '/' + name;
    if (type === 5) FS.mkdirTree(path);
    else if (type === 0) {
      FS.mkdirTree(path.slice(0, path.lastIndexOf('/')));
      FS.writeFile(path, tar.subarray(data, data + size), { canOwn: true });
      const modified = parseInt(tarField(tar, offset + 136, 12).trim(), 8) || Math.floor(Date.now() / 1000);
      FS.utime(path, modified, modified);
    }
    offset = data + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
  }
};
const OS_PAGE = 4096;
// Copies the pages of chunk (bytes at \`position\` of the dump) that are not all zeros.
const copyNonZeroPages = (bytes, chunk, length, position) => {
  for (let start = 0; start < length; ) {
    const end = Math.min(length, start + OS_PAGE - ((position + start) % OS_PAGE));
    let zero = true;
    for (let index = start; zero && index < end; index++) zero = chunk[index] === 0;
    if (!zero) bytes.set(chunk.subarray(start, end), position + start);
    start = end;
  }
};
const readDump = async (dump) => {
  if (typeof dump !== 'string') {
    const bytes = new Uint8Array(dump.size);
    let position = 0;
    for await (const chunk of dump.stream()) {
      copyNonZeroPages(bytes, chunk, chunk.length, position);
      position += chunk.length;
    }
    return bytes;
  }
  // One read buffer for the whole file: a new one per read is as much garbage as the dump.
  const fd = openSync(dump, 'r');
  try {
    const bytes = new Uint8Array(fstatSync(fd).size);
    const chunk = new Uint8Array(1 << 20);
    for (let position = 0; position < bytes.length; ) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, bytes.length - position), position);
      if (read === 0) throw new Error('the dump ' + dump + ' ended before its size');
      copyNonZeroPages(bytes, chunk, read, position);
      position += read;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
};
const dumpOptions = async (PGlite, MemoryFS, dataPath, dump) => {
  if (dump === undefined) return {};
  const tar = await readDump(dump);
  if (dataPath !== 'memory://' || !isPlainTar(tar)) return { loadDataDir: new Blob([tar]) };
  class MemoryFSFromDump extends MemoryFS {
    async initialSyncFs() {
      unpackTar(this.pg.Module.FS, tar, PGlite.paths.PGDATA);
    }
  }
  return { fs: new MemoryFSFromDump() };
};
`;

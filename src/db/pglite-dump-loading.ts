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
// A file that shares its bytes with others (identical files of the dump, one copy for all): it takes
// a copy of its own before its first write, which MEMFS would otherwise make in place, into every
// file that shares them (a write past the end, or a truncation, already gives it a new array).
const copyOnWriteOps = (FS, fileOps) => ({
  ...fileOps,
  write(stream, buffer, offset, length, position, canOwn) {
    const node = stream.node;
    if (node.sharedBytes) {
      node.contents = node.contents.slice(0, node.usedBytes);
      node.sharedBytes = false;
    }
    return fileOps.write(stream, buffer, offset, length, position, canOwn);
  },
});
const unpackTar = (FS, dump, root) => {
  const { tar, duplicates, shared } = dump;
  let sharedOps;
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
      const source = duplicates.get(data) ?? data;
      FS.writeFile(path, tar.subarray(source, source + size), { canOwn: true });
      if (shared.has(data)) {
        const node = FS.lookupPath(path).node;
        sharedOps ??= copyOnWriteOps(FS, node.stream_ops);
        node.stream_ops = sharedOps;
        node.sharedBytes = true;
      }
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
// Takes the dump's bytes as they are read (chunk: \`length\` bytes at \`position\`), into \`bytes\`:
// every page that is not all zeros, except the contents of a file identical to one read before it
// (template0, template1 and postgres hold the same catalogs, the half of a fresh dump's data). Such
// a file is left out (its pages of zeros untouched) and named in \`duplicates\` (its data's offset
// to that of the first copy, which the archive holds whole); \`shared\` holds the offsets of every
// file whose bytes are shared. A file is compared as it arrives with the files of its size read
// before it, and is copied as soon as it differs from all. The archive's headers are read as they
// come; one that is not intact ends the comparing (the rest is copied, and unpackTar rejects it).
const dumpReader = (bytes, deduplicate) => {
  const duplicates = new Map();
  const shared = new Set();
  const bySize = new Map();
  let header = 0;
  let parsing = deduplicate;
  let file = null;
  const sameBytes = (at, piece, length) => Buffer.compare(bytes.subarray(at, at + length), piece.subarray(0, length)) === 0;
  const takeFileData = (piece, length, position) => {
    const into = position - file.data;
    if (file.candidates.length > 0) {
      const matching = file.candidates.filter((candidate) => sameBytes(candidate + into, piece, length));
      if (matching.length > 0) {
        file.candidates = matching;
        return;
      }
      // Equal to file.candidates[0] so far: its bytes are this file's until here.
      copyNonZeroPages(bytes, bytes.subarray(file.candidates[0], file.candidates[0] + into), into, file.data);
      file.candidates = [];
    }
    copyNonZeroPages(bytes, piece, length, position);
  };
  const fileEnded = () => {
    if (file.candidates.length > 0) {
      duplicates.set(file.data, file.candidates[0]);
      shared.add(file.data).add(file.candidates[0]);
    } else {
      bySize.get(file.size)?.push(file.data) ?? bySize.set(file.size, [file.data]);
    }
    file = null;
  };
  const headerRead = () => {
    if (bytes.subarray(header, header + TAR_BLOCK).every((byte) => byte === 0) || !tarHeaderIntact(bytes, header)) {
      parsing = false;
      return;
    }
    const size = parseInt(tarField(bytes, header + 124, 12).trim(), 8) || 0;
    const type = (parseInt(String.fromCharCode(bytes[header + 156]), 10) || 0) % 8;
    const data = header + TAR_BLOCK;
    if (type === 0 && size > 0) file = { data, end: data + size, size, candidates: [...(bySize.get(size) ?? [])] };
    header = data + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
  };
  const take = (chunk, length, position) => {
    for (let at = 0; at < length; ) {
      if (file && position + at >= file.data) {
        const end = Math.min(length, file.end - position);
        takeFileData(chunk.subarray(at, end), end - at, position + at);
        at = end;
        if (position + at === file.end) fileEnded();
        continue;
      }
      const end = parsing ? Math.min(length, (file ? file.data : header + TAR_BLOCK) - position) : length;
      copyNonZeroPages(bytes, chunk.subarray(at, end), end - at, position + at);
      at = end;
      if (parsing && !file && position + at === header + TAR_BLOCK) headerRead();
    }
  };
  return { take, read: () => ({ tar: bytes, duplicates, shared }) };
};
// The dump as { tar, duplicates, shared } (dumpReader), with no duplicates when not \`deduplicate\`.
const readDump = async (dump, deduplicate) => {
  if (typeof dump !== 'string') {
    const reader = dumpReader(new Uint8Array(dump.size), deduplicate);
    let position = 0;
    for await (const chunk of dump.stream()) {
      reader.take(chunk, chunk.length, position);
      position += chunk.length;
    }
    return reader.read();
  }
  // One read buffer for the whole file: a new one per read is as much garbage as the dump.
  const fd = openSync(dump, 'r');
  try {
    const size = fstatSync(fd).size;
    const reader = dumpReader(new Uint8Array(size), deduplicate);
    const chunk = new Uint8Array(1 << 20);
    for (let position = 0; position < size; ) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, size - position), position);
      if (read === 0) throw new Error('the dump ' + dump + ' ended before its size');
      reader.take(chunk, read, position);
      position += read;
    }
    return reader.read();
  } finally {
    closeSync(fd);
  }
};
const dumpOptions = async (PGlite, MemoryFS, dataPath, dump) => {
  if (dump === undefined) return {};
  // Only a dump unpacked here may leave its identical files out: PGlite's loadDataDir needs them all.
  const unpacked = await readDump(dump, dataPath === 'memory://');
  const tar = unpacked.tar;
  if (dataPath !== 'memory://' || !isPlainTar(tar)) return { loadDataDir: new Blob([tar]) };
  class MemoryFSFromDump extends MemoryFS {
    async initialSyncFs() {
      unpackTar(this.pg.Module.FS, unpacked, PGlite.paths.PGDATA);
    }
  }
  return { fs: new MemoryFSFromDump() };
};
`;

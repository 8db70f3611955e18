import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { DUMP_LOADING } from './pglite-dump-loading.ts';

/**
 * The embedded database in a worker thread of its own. PGlite runs PostgreSQL as WebAssembly, and a
 * query runs synchronously in the thread that calls it: in the server's thread, every statement
 * stopped the event loop for its whole length (40–225 ms at a time with 200 runs in flight, the
 * runs-list workload of `npm run bench` measured), so websockets, HTTP and timers waited for the
 * database. Here the server's thread only posts the statement and receives the rows.
 *
 * What kysely-pglite-dialect calls of a PGlite — `query(sql, params)` and `close()` — and no more.
 * Values cross the thread by structured clone, which keeps what PGlite reads (Date, BigInt,
 * Uint8Array, parsed JSON); an error keeps its message and PostgreSQL's fields (`code`,
 * `constraint`, …), which the repositories read.
 */
export interface PGliteThread {
  query(sql: string, params?: readonly unknown[]): Promise<{ rows: unknown[]; affectedRows?: number }>;
  /** The data directory as an uncompressed tar (PGlite's `dumpDataDir`), to load elsewhere. */
  dump(): Promise<ArrayBuffer>;
  close(): Promise<void>;
}

export interface PGliteThreadOptions {
  /** Appended to PGlite's own start parameters. */
  readonly startParams: readonly string[];
  /**
   * A data-directory dump (PGlite's `dumpDataDir`) to start a new database from: a Blob, or the
   * path of the file that holds it, which the database's thread reads (the server's thread never
   * holds a copy). How the thread loads it: pglite-dump-loading.ts.
   */
  readonly dump?: Blob | string;
}

/**
 * The worker's program: plain JavaScript evaluated as the worker's script (no file to find, no
 * TypeScript loader), PGlite imported by the URL the server resolved.
 */
const WORKER_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
${DUMP_LOADING}
const describe = (error) => {
  const described = { message: error instanceof Error ? error.message : String(error), name: error instanceof Error ? error.name : 'Error' };
  if (error && typeof error === 'object') {
    for (const [key, value] of Object.entries(error)) {
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) described[key] = value;
    }
  }
  return described;
};
(async () => {
  let client;
  try {
    const { PGlite, MemoryFS } = await import(workerData.pglite);
    const dump = await dumpOptions(PGlite, MemoryFS, workerData.dataPath, workerData.dump);
    // workerData lives as long as the thread: it must not keep the dump.
    workerData.dump = undefined;
    const compiled = workerData.module ? { pgliteWasmModule: workerData.module } : {};
    client = await PGlite.create(workerData.dataPath, { startParams: [...PGlite.defaultStartParams, ...workerData.startParams], ...dump, ...compiled });
  } catch (error) {
    parentPort.postMessage({ type: 'failed', error: describe(error) });
    return;
  }
  parentPort.on('message', async (message) => {
    if (message.type === 'close') {
      await client.close().catch(() => undefined);
      parentPort.postMessage({ type: 'closed' });
      return;
    }
    try {
      if (message.type === 'dump') {
        const tar = await (await client.dumpDataDir('none')).arrayBuffer();
        parentPort.postMessage({ type: 'result', id: message.id, tar }, [tar]);
        return;
      }
      const result = await client.query(message.sql, message.params);
      parentPort.postMessage({ type: 'result', id: message.id, rows: result.rows, affectedRows: result.affectedRows });
    } catch (error) {
      parentPort.postMessage({ type: 'result', id: message.id, error: describe(error) });
    }
  });
  parentPort.postMessage({ type: 'ready' });
})();
`;

type ResultReply = { type: 'result'; id: number; rows?: unknown[]; affectedRows?: number; tar?: ArrayBuffer; error?: DescribedError };
type Reply = { type: 'ready' } | { type: 'closed' } | { type: 'failed'; error: DescribedError } | ResultReply;

type DescribedError = { message: string; name: string } & Record<string, string | number | boolean | null>;

/** The error as the worker described it: an Error with the same message and fields. */
function revived(described: DescribedError): Error {
  return Object.assign(new Error(described.message), described);
}

let compiling: Promise<WebAssembly.Module | undefined> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process and handed to every thread that opens a database
 * (a module crosses threads without a copy of its code): each new thread otherwise reads and
 * compiles the 9.9 MB file again, a quarter of a second of every open. Undefined when it cannot be
 * read or compiled here; PGlite then loads it itself, as without this.
 */
function pgliteModule(pglite: string): Promise<WebAssembly.Module | undefined> {
  compiling ??= readFile(new URL('pglite.wasm', pglite))
    .then((bytes) => WebAssembly.compile(bytes))
    .catch(() => undefined);
  return compiling;
}

/** Opens the database in a new worker thread; rejects with PGlite's error when it does not open. */
export async function openPGliteThread(dataPath: string, options: PGliteThreadOptions): Promise<PGliteThread> {
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const module = await pgliteModule(pglite);
  const worker = new Worker(WORKER_PROGRAM, {
    eval: true,
    // Plain JavaScript: none of the process's loader flags (tsx's hooks under `npm test`).
    execArgv: [],
    // The thread's JavaScript only passes statements and rows: a young generation of 2 MiB
    // semi-spaces, not the 8 MiB ones V8 grew to while PGlite loaded (16 MiB resident, 0.4 used).
    resourceLimits: { maxYoungGenerationSizeMb: 6 },
    // A Blob crosses by reference to its bytes, not by a copy.
    workerData: { pglite, dataPath, startParams: [...options.startParams], dump: options.dump, module },
  });
  const pending = new Map<number, { resolve(reply: ResultReply): void; reject(error: unknown): void }>();
  let nextId = 1;
  let stopped: Error | null = null;
  let closing: Promise<void> | null = null;

  const stop = (error: Error) => {
    stopped ??= error;
    for (const { reject } of pending.values()) reject(stopped);
    pending.clear();
  };
  let onOpening: ((reply: Reply) => void) | undefined;
  let onOpeningError: ((error: Error) => void) | undefined;
  let onOpeningExit: ((code: number) => void) | undefined;
  await new Promise<void>((resolve, reject) => {
    onOpening = (reply) => (reply.type === 'ready' ? resolve() : reply.type === 'failed' ? reject(revived(reply.error)) : undefined);
    onOpeningError = reject;
    onOpeningExit = (code) => reject(new Error(`the embedded database's thread ended (exit code ${code}) before it opened`));
    worker.on('message', onOpening).once('error', onOpeningError).once('exit', onOpeningExit);
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  // Not removeAllListeners(): the Worker keeps listeners of its own.
  worker.off('message', onOpening!).off('error', onOpeningError!).off('exit', onOpeningExit!);
  worker.on('message', (reply: Reply) => {
    if (reply.type !== 'result') return;
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (reply.error) waiting.reject(revived(reply.error));
    else waiting.resolve(reply);
  });
  worker.on('error', (error) => stop(new Error(`the embedded database failed: ${error.message}`)));
  worker.on('exit', (code) => stop(new Error(`the embedded database's thread ended (exit code ${code})`)));
  // Idle, the thread keeps the process alive no more than an in-thread PGlite would: only while a
  // statement is in flight.
  worker.unref();

  /** Posts a request to the thread; its reply (or its error) settles the promise. */
  const ask = (request: { type: 'query'; sql: string; params: readonly unknown[] } | { type: 'dump' }): Promise<ResultReply> => {
    if (stopped) return Promise.reject(stopped);
    return new Promise((resolve, reject) => {
      const id = nextId++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  };

  return {
    async query(sql, params = []) {
      const reply = await ask({ type: 'query', sql, params });
      return { rows: reply.rows ?? [], ...(reply.affectedRows === undefined ? {} : { affectedRows: reply.affectedRows }) };
    },
    async dump() {
      return (await ask({ type: 'dump' })).tar!;
    },
    close() {
      closing ??= (async () => {
        if (!stopped) {
          const closed = new Promise<void>((resolve) => {
            worker.on('message', (reply: Reply) => reply.type === 'closed' && resolve());
            worker.once('exit', () => resolve());
          });
          worker.ref();
          worker.postMessage({ type: 'close' });
          await closed;
        }
        stop(new Error('the embedded database is closed'));
        await worker.terminate();
      })();
      return closing;
    },
  };
}

import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * One process per embedded data directory. PGlite is a single-process database: a second process
 * opening the same directory (a seed or demo beside a running server) silently loses writes. The
 * lock is a file created atomically (`wx`) holding the holder's pid; it is removed on close and on
 * exit, and a file left by a process that no longer exists (a crash, SIGKILL) is taken over.
 */

export const LOCK_FILE = 'airlock.lock';

interface Holder {
  readonly pid: number;
  readonly startedAt: string;
  readonly command: string;
}

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(dataDir: string, holder: Holder) {
    super(
      `The data directory ${dataDir} is in use by process ${holder.pid} (${holder.command}, since ${holder.startedAt}). ` +
        'PGlite allows one process per data directory: stop that process first, use another AIRLOCK_DATA_DIR, ' +
        'or set DATABASE_URL to a PostgreSQL server to run several processes on one database.',
    );
  }
}

export interface DataDirLock {
  /** Removes the lock file if this process still holds it; safe to call twice. */
  release(): void;
}

/** Held locks of this process, released on exit (a `process.exit` skips every close). */
const held = new Set<string>();
process.once('exit', () => {
  for (const file of held) removeIfOurs(file);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof parsed.pid === 'number' && Number.isSafeInteger(parsed.pid) && parsed.pid > 0
      ? { pid: parsed.pid, startedAt: String(parsed.startedAt ?? 'an unknown time'), command: String(parsed.command ?? 'unknown command') }
      : null;
  } catch {
    return null;
  }
}

function removeIfOurs(file: string): void {
  if (readHolder(file)?.pid !== process.pid) return;
  try {
    unlinkSync(file);
  } catch {
    // Already gone: nothing to release.
  }
  held.delete(file);
}

/** Takes the lock of `dataDir` (which must exist) or throws DataDirLockedError naming the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  const me: Holder = { pid: process.pid, startedAt: new Date().toISOString(), command: path.basename(process.argv[1] ?? process.argv0) };
  // A few attempts: each one either creates the file or finds a live holder or removes a dead one.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(me));
      } finally {
        closeSync(fd);
      }
      held.add(file);
      return { release: () => removeIfOurs(file) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(file);
    // A holder that is this very process is a second handle on the directory: as unsafe as another process.
    if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
    // A dead holder's lock, or one whose writer died before writing it: take it over.
    try {
      unlinkSync(file);
    } catch {
      // Someone else removed it first; try again.
    }
  }
  throw new Error(`Could not take the lock of the data directory ${dataDir}; remove ${file} if no Airlock process uses it.`);
}

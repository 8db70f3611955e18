import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/db/data-dir-lock.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'airlock-lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A pid that certainly belongs to no process any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

describe('the embedded data directory lock', () => {
  it('should refuse a second holder, naming the first, until the first releases', () => {
    const dir = tempDir();
    const first = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by process ${process.pid}.*DATABASE_URL`));
    first.release();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir).release();
  });

  it('should take over a lock left by a process that no longer exists, and one that was never written', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid(), startedAt: 'then', command: 'main.ts' }));
    const lock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    lock.release();
    writeFileSync(path.join(dir, LOCK_FILE), '');
    lockDataDir(dir).release();
  });

  it('should stop a second real process on the same directory with a clear message, and let one in once the holder is gone', async () => {
    const dataDir = tempDir();
    // Process 1 holds the lock as any Airlock process does (createDb takes it before PGlite opens).
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', `import('./src/db/data-dir-lock.ts').then((m) => { m.lockDataDir(${JSON.stringify(dataDir)}); console.log('held'); setInterval(() => {}, 1000); })`],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [chunk] = (await once(holder.stdout!, 'data')) as [Buffer];
      expect(chunk.toString()).toContain('held');

      // Process 2: `npm run seed` on the same directory is refused before it opens anything.
      const env = { PATH: process.env.PATH, AIRLOCK_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
      const seed = spawn(process.execPath, ['--import', 'tsx', 'src/db/seed.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      seed.stderr!.on('data', (data) => (stderr += data));
      const [code] = await once(seed, 'exit');
      expect(code).toBe(1);
      expect(stderr).toContain(`is in use by process ${holder.pid}`);
      expect(stderr).toContain('stop that process first');
      expect(stderr).not.toMatch(/at .*\.ts:\d+/);
      expect(existsSync(path.join(dataDir, 'pglite'))).toBe(false);

      // The holder dies without cleaning up (SIGKILL): the next process takes its lock over.
      const exited = once(holder, 'exit');
      holder.kill('SIGKILL');
      await exited;
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(true);
      const next = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('./src/db/data-dir-lock.ts').then((m) => m.lockDataDir(${JSON.stringify(dataDir)}).release())`], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(next.status, next.stderr).toBe(0);
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      if (holder.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL');
    }
  }, 60_000);
});

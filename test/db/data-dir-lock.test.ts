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

  it('should stop a second real process on the same directory with a clear message, and let it in once the first is gone', async () => {
    const dataDir = tempDir();
    const env = { PATH: process.env.PATH, AIRLOCK_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stdout = '';
      server.stdout.on('data', (chunk) => (stdout += chunk));
      const deadline = Date.now() + 45_000;
      while (!/listening on/.test(stdout) && Date.now() < deadline && server.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stdout).toMatch(/listening on/);

      const seed = () =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'src/db/seed.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk) => (stderr += chunk));
          child.once('exit', (code) => resolve({ code, stderr }));
        });
      const refused = await seed();
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`is in use by process ${server.pid}`);
      expect(refused.stderr).toContain('stop that process first');
      expect(refused.stderr).not.toMatch(/at .*\.ts:\d+/);

      const exited = once(server, 'exit');
      server.kill('SIGKILL');
      await exited;
      expect((await seed()).code).toBe(0);
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    }
  }, 120_000);
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVER_MAIN } from '../helpers/server-build.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `npm start` as a newcomer runs it: a real process, its stdout, then SIGTERM. */
describe('the service process', () => {
  it('should print the URL and a one-time admin token, answer viewer with it, and stop cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [SERVER_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, AIRLOCK_DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    try {
      const deadline = Date.now() + 45_000;
      while (!/Admin token/.test(stdout) && Date.now() < deadline && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const url = /listening on (\S+)/.exec(stdout)?.[1];
      const token = /Admin token \(shown once, store it now\): (\S+)/.exec(stdout)?.[1];
      expect(url, `stdout: ${stdout}\nstderr: ${stderr}`).toBeDefined();
      expect(token).toMatch(/^alk_/);
      const response = await fetch(url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ viewer { name isAdmin } }' }),
      });
      expect(await response.json()).toEqual({ data: { viewer: { name: 'admin', isAdmin: true } } });
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      await expect(fetch(url!)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  it('should exit 1 with a message naming the bad variable when the configuration is invalid', async () => {
    const child = spawn(process.execPath, [SERVER_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: 'not-a-port', AIRLOCK_DATA_DIR: 'memory://' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('PORT: must be a whole number');
    expect(stderr).not.toMatch(/at .*\.ts:\d+/);
  }, 30_000);

  it.skipIf(!process.env.TEST_DATABASE_URL)('should refuse to start when REDIS_URL cannot be reached, naming the variable and never its password', async () => {
    const password = `redis-canary-${Date.now()}`;
    const child = spawn(process.execPath, [SERVER_MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        DATABASE_URL: process.env.TEST_DATABASE_URL,
        AIRLOCK_MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
        // Port 1: nothing listens there.
        REDIS_URL: `redis://default:${password}@127.0.0.1:1`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output).toMatch(/REDIS_URL: could not connect to Redis at redis:\/\/127\.0\.0\.1:1 \(.*ECONNREFUSED.*\); start Redis there, or correct REDIS_URL/);
    expect(output).not.toContain(password);
    expect(output).not.toMatch(/listening on/);
  }, 30_000);

  it('should run one agent loop from the command line with `npm run demo -- --scripted`, printing each step', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo.ts', '--scripted', 'Who are our customers?'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, AIRLOCK_DATA_DIR: 'memory://', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(stdout).toMatch(/→ round 1: asking the model/);
    expect(stdout).toMatch(/⚙ describe_tables/);
    expect(stdout).toMatch(/⚙ read_records/);
    expect(stdout).toMatch(/COMPLETED \(COMPLETED\), 3 iteration\(s\)/);
    expect(stdout).not.toMatch(/password_hash":"\$/);
  }, 60_000);
});

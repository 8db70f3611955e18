import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm start` (src/start.js) in a copy of the repository (its own dist/), so that sources can be
 * changed and broken without touching the checkout: it runs the compiled server, compiles only when a
 * source changed, refuses a source that does not compile, and runs the TypeScript sources when tool
 * modules are named.
 */
describe('npm start', () => {
  let copy: string;
  const dist = (...parts: string[]) => path.join(copy, 'dist', ...parts);

  beforeAll(() => {
    copy = mkdtempSync(path.join(tmpdir(), 'airlock-start-'));
    for (const part of ['package.json', 'src', 'migrations', 'examples']) cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  /** `node src/build.js`, as npm ci's postinstall runs it. */
  const build = () => expect(spawnSync(process.execPath, ['src/build.js'], { cwd: copy, encoding: 'utf8' }).stdout).toContain('server compiled to dist/');

  /** One `npm start`: its output until it listens (then SIGTERM) or exits. */
  async function start(env: Record<string, string> = {}): Promise<{ listening: boolean; code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['src/start.js'], {
      cwd: copy,
      // A new data directory each time: the template's copy opens faster than memory:// loads.
      env: { PATH: process.env.PATH, AIRLOCK_DATA_DIR: mkdtempSync(path.join(copy, 'data-')), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = once(child, 'exit');
    try {
      const deadline = Date.now() + 60_000;
      while (!/is listening on/.test(stdout) && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const listening = /is listening on/.test(stdout);
      if (child.exitCode === null) child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return { listening, code, stdout, stderr };
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  it('should compile on the first start, run the compiled server without compiling again, and compile again when a source changes', async () => {
    const first = await start();
    expect(first.listening, first.stdout + first.stderr).toBe(true);
    expect(first.stdout).toContain('Airlock: compiling the server (the sources changed since the last build)');
    expect(readFileSync(dist('src/main.js'), 'utf8')).toContain('from "./config.js"');
    expect(readFileSync(dist('src/dashboard/assets/index.html'), 'utf8')).toContain('<');

    // What runs is dist/: a line added to the compiled entry shows, and nothing is compiled.
    writeFileSync(dist('src/main.js'), `console.log('running the build');\n${readFileSync(dist('src/main.js'), 'utf8')}`);
    const second = await start();
    expect(second.listening).toBe(true);
    expect(second.stdout).toContain('running the build');
    expect(second.stdout).not.toContain('compiling');

    // A source touched (same content, new time) counts as changed: compiled again, the line gone.
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(copy, 'src/config.ts'), later, later);
    const third = await start();
    expect(third.listening).toBe(true);
    expect(third.stdout).toContain('compiling');
    expect(third.stdout).not.toContain('running the build');
  }, 120_000);

  it('should refuse a source that does not compile, naming the file, and keep the previous build whole', async () => {
    build();
    const stamp = readFileSync(dist('build.json'), 'utf8');
    const file = path.join(copy, 'src/errors.ts');
    const source = readFileSync(file, 'utf8');
    writeFileSync(file, `${source}\nexport const broken = ;\n`);
    try {
      const refused = await start();
      expect(refused.listening).toBe(false);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/the sources do not compile: .*src\/errors\.ts/s);
      expect(refused.stderr).toContain('npm run typecheck');
      expect(readFileSync(dist('build.json'), 'utf8')).toBe(stamp);
    } finally {
      writeFileSync(file, source);
    }
  }, 120_000);

  it('should run the TypeScript sources when tool modules are named (they may be TypeScript and import the sources)', async () => {
    build();
    writeFileSync(dist('src/main.js'), `console.log('running the build');\n${readFileSync(dist('src/main.js'), 'utf8')}`);
    const withTools = await start({ AIRLOCK_TOOL_MODULES: './examples/weather-tool.ts', LOG_LEVEL: 'info' });
    expect(withTools.listening, withTools.stdout + withTools.stderr).toBe(true);
    expect(withTools.stdout).toContain('example weather tools loaded');
    expect(withTools.stdout).not.toContain('running the build');
    expect(withTools.stdout).not.toContain('compiling');
  }, 120_000);
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { freePort } from '../helpers/redis.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * No container engine runs where this was written, so the Dockerfile is checked here as text (its
 * promises: a health check on /ready, no anonymous volume, a runtime stage without dev tools, the
 * install step before the sources) and by running what it runs that can run without one: its health
 * check's command, and the postinstall its `npm ci` steps trigger without src/.
 */

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** Index of the stage (its FROM) the instruction belongs to. */
  readonly stage: number;
}

/** Instructions in order: comments dropped, `\` continuations joined, each tagged with its stage. */
function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line) && pending === '') continue;
    const continued = /\\\s*$/.test(line);
    pending += `${continued ? line.replace(/\\\s*$/, '') : line} `;
    if (!continued) {
      if (pending.trim() !== '') logical.push(pending.trim());
      pending = '';
    }
  }
  let stage = -1;
  return logical.map((line) => {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') stage++;
    return { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' '), stage };
  });
}

const instructions = parseDockerfile(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const runtimeStage = Math.max(...instructions.map((instruction) => instruction.stage));
const runtime = instructions.filter((instruction) => instruction.stage === runtimeStage);
const of = (list: Instruction[], keyword: string) => list.filter((instruction) => instruction.keyword === keyword);

/** The health check's exec form: ["node", "-e", script]. */
function healthCheckScript(): string {
  const [check] = of(runtime, 'HEALTHCHECK');
  const exec = /\bCMD (\[.*\])$/.exec(check?.args ?? '');
  const command = JSON.parse(exec?.[1] ?? 'null') as unknown;
  expect(command).toEqual(['node', '-e', expect.any(String)]);
  return (command as string[])[2]!;
}

/** Runs the health check's command as Docker would inside the container, with PORT set. */
async function runHealthCheck(port: number): Promise<number | null> {
  const child = spawn(process.execPath, ['-e', healthCheckScript()], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

describe('Dockerfile', () => {
  it('should declare no VOLUME: a container whose DATABASE_URL points elsewhere gets no anonymous volume', () => {
    expect(instructions.length).toBeGreaterThan(10);
    expect(of(instructions, 'VOLUME')).toEqual([]);
  });

  it('should install only production dependencies in the runtime stage, copy in the build and no sources, and run as node', () => {
    expect(runtimeStage).toBeGreaterThan(0);
    const installs = of(runtime, 'RUN').filter((run) => /\bnpm (ci|install|i)\b/.test(run.args));
    expect(installs).toHaveLength(1);
    expect(installs[0]!.args).toMatch(/\bnpm ci --omit=dev\b/);
    expect(of(runtime, 'COPY').map((copy) => copy.args)).toEqual(['package.json package-lock.json ./', '--from=build /app/dist ./dist']);
    expect(of(runtime, 'USER').map((user) => user.args)).toEqual(['node']);
    expect(of(runtime, 'CMD').map((cmd) => JSON.parse(cmd.args) as unknown)).toEqual([['node', '--conditions=airlock-dist', 'dist/src/main.js']]);
  });

  it('should remove esbuild and tsx from the runtime stage, which loads neither: only checkout-side files import them', () => {
    const install = of(runtime, 'RUN').find((run) => run.args.includes('npm ci --omit=dev'))!;
    for (const removed of ['node_modules/esbuild', 'node_modules/@esbuild', 'node_modules/tsx']) expect(install.args).toContain(removed);
    const importers: string[] = [];
    const walk = (relative: string) => {
      for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
        const child = path.posix.join(relative, entry.name);
        if (entry.isDirectory()) walk(child);
        else if (/\.(ts|js)$/.test(entry.name) && /['"](esbuild|tsx)['"]/.test(readFileSync(path.join(ROOT, child), 'utf8'))) importers.push(child);
      }
    };
    walk('src');
    walk('migrations');
    // build.js, postinstall.js (through build.js) and start.js run on a checkout, never in the image;
    // dashboard/bundle.ts loads esbuild only when the console's sources (src/dashboard/app) are
    // present, and the build (dist/) carries the bundle instead.
    expect(importers.sort()).toEqual(['src/build.js', 'src/dashboard/bundle.ts', 'src/start.js']);
    expect(readFileSync(path.join(ROOT, 'src/dashboard/bundle.ts'), 'utf8')).toContain("await import('esbuild')");
    // The console's TypeScript is browser code: bundled by bundleDashboard, never compiled one to one into dist/.
    expect(readFileSync(path.join(ROOT, 'src/build.js'), 'utf8')).toContain('!file.startsWith(CONSOLE_SOURCES)');
  });

  it('should run every npm ci before the sources are copied, so the postinstall meets a folder without src/', () => {
    for (const stage of new Set(instructions.map((instruction) => instruction.stage))) {
      const inStage = instructions.filter((instruction) => instruction.stage === stage);
      const install = inStage.findIndex((instruction) => instruction.keyword === 'RUN' && instruction.args.includes('npm ci'));
      const sources = inStage.findIndex((instruction) => instruction.keyword === 'COPY' && /(^| )src( |$)/.test(instruction.args));
      expect(install).toBeGreaterThan(-1);
      if (sources !== -1) expect(install).toBeLessThan(sources);
    }
  });

  it('should check health on /ready with Node (the image has no curl), under a timeout of its own', () => {
    const [check] = of(runtime, 'HEALTHCHECK');
    expect(check?.args).toMatch(/--timeout=(\d+)s/);
    const script = healthCheckScript();
    expect(script).toContain("'/ready'");
    const abortMs = Number(/AbortSignal\.timeout\((\d+)\)/.exec(script)?.[1]);
    expect(abortMs).toBeLessThan(Number(/--timeout=(\d+)s/.exec(check!.args)![1]) * 1000);
  });
});

describe("the Dockerfile's health check, run", () => {
  let t: TestApp;
  let port: number;
  const stubs: Server[] = [];
  beforeAll(async () => {
    t = await startTestApp('pglite');
    port = Number(new URL((await t.app.server.start()).url).port);
  });
  afterAll(async () => {
    for (const stub of stubs) {
      stub.closeAllConnections();
      stub.close();
    }
    await t.stop();
  });

  /** An HTTP server on 127.0.0.1 that answers every request with `answer`. */
  async function stub(answer: (res: import('node:http').ServerResponse) => void): Promise<number> {
    const server = createServer((_req, res) => answer(res));
    stubs.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  }

  it("should pass against Airlock whose /ready answers 200", async () => {
    expect(await runHealthCheck(port)).toBe(0);
  });

  it('should fail when /ready answers 503 (the database or Redis is away)', async () => {
    expect(await runHealthCheck(await stub((res) => res.writeHead(503).end('{"ready":false}')))).toBe(1);
  });

  it('should fail when nothing listens, and when the server never answers (its own timeout)', async () => {
    expect(await runHealthCheck(await freePort())).toBe(1);
    expect(await runHealthCheck(await stub(() => undefined))).toBe(1);
  });
});

describe('the postinstall (package.json)', () => {
  const postinstall = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.postinstall!;
  const folders: string[] = [];
  afterAll(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  /** A folder holding package.json, as a Docker layer has it before the sources are copied. */
  function folderWithPackageJson(): string {
    const folder = mkdtempSync(path.join(tmpdir(), 'airlock-postinstall-'));
    folders.push(folder);
    copyFileSync(path.join(ROOT, 'package.json'), path.join(folder, 'package.json'));
    return folder;
  }

  /** The script as npm runs it: `sh -c`, in the package's folder. */
  async function run(cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn('sh', ['-c', postinstall], { cwd, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  }

  it('should succeed with a one-line note when src/ is absent (npm ci before the sources are copied)', async () => {
    const result = await run(folderWithPackageJson());
    expect(result).toEqual({
      code: 0,
      stdout: 'Airlock postinstall: no src/ here yet (only package.json copied, as in a Docker layer): nothing to build now; npm run build once the sources are in place.\n',
      stderr: '',
    });
  });

  it('should fail the install, naming the step, the broken file and what to do, when the sources do not compile', async () => {
    const folder = folderWithPackageJson();
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'), 'dir');
    mkdirSync(path.join(folder, 'src'));
    mkdirSync(path.join(folder, 'migrations'));
    for (const file of ['build.js', 'postinstall.js']) copyFileSync(path.join(ROOT, 'src', file), path.join(folder, 'src', file));
    writeFileSync(path.join(folder, 'src/broken.ts'), 'export const answer = ;\n');
    const result = await run(folder);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Airlock postinstall: compiling the server to dist/ (src/build.js) failed:');
    expect(result.stderr).toContain('src/broken.ts:1:');
    expect(result.stderr).toContain('then run npm run build, or npm ci again.');
    expect(existsSync(path.join(folder, 'dist'))).toBe(false);
  });
});

/**
 * The server as plain JavaScript in dist/ (`npm run build`; `npm start` runs it when the sources
 * have changed, npm ci's postinstall once): every TypeScript file of src/ and migrations/ compiled
 * one to one by esbuild (types stripped, nothing bundled, `./x.ts` imports rewritten to `./x.js`),
 * side by side as in the repository (migrate.ts finds dist/migrations), and the console's bundle in
 * dist/src/dashboard/assets. Plain JavaScript itself, so that it runs without a TypeScript loader.
 * It checks no types: `npm run typecheck` (and `npm run build`, before it) does.
 *
 * dist/build.json records a fingerprint of the sources (every file's path, size and modification
 * time): `npm start` compares it in a few milliseconds and compiles again only on a difference.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = path.join(REPO_ROOT, 'dist');
const SOURCES = ['src', 'migrations'];
const STAMP = 'build.json';
const CONSOLE_SOURCES = path.join('src', 'dashboard', 'app') + path.sep;

/** Every file below the source folders, relative to the repository, in a stable order. */
function sourceFiles() {
  const files = [];
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(REPO_ROOT, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.push(child);
    }
  };
  for (const folder of SOURCES) walk(folder);
  return files.sort();
}

/** What the build was made from: a change to any source file (or a new or deleted one) changes it. */
export function sourceFingerprint(files = sourceFiles()) {
  const hash = createHash('sha256');
  for (const file of files) {
    const { size, mtimeMs } = statSync(path.join(REPO_ROOT, file));
    hash.update(`${file}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** True when dist/ holds a build of the sources as they are now. */
export function buildIsCurrent() {
  try {
    return JSON.parse(readFileSync(path.join(DIST, STAMP), 'utf8')).fingerprint === sourceFingerprint();
  } catch {
    return false;
  }
}

/**
 * Compiles into a folder of its own, then swaps it for dist/ (a reader sees the old build or the new
 * one, never half of one). Throws esbuild's error (file, line, message) when a source does not compile.
 */
export async function buildServer() {
  const files = sourceFiles();
  const fingerprint = sourceFingerprint(files);
  const { build } = await import('esbuild');
  const partial = `${DIST}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  try {
    await build({
      absWorkingDir: REPO_ROOT,
      // The console's sources are browser code, bundled apart below (bundleDashboard), not compiled one to one.
      entryPoints: files.filter((file) => /\.ts$/.test(file) && !file.endsWith('.d.ts') && !file.startsWith(CONSOLE_SOURCES)),
      outdir: partial,
      outbase: '.',
      // "Bundling" only to rewrite imports: every package and every other file stays an import.
      bundle: true,
      packages: 'external',
      plugins: [relativeImportsStayImports],
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'silent',
    });
    const { bundleDashboard } = await import(pathToFileURL(path.join(partial, 'src/dashboard/bundle.js')).href);
    const assets = await bundleDashboard(path.join(REPO_ROOT, 'src/dashboard/app'));
    const assetsDir = path.join(partial, 'src/dashboard/assets');
    await mkdir(assetsDir, { recursive: true });
    for (const [name, asset] of assets) await writeFile(path.join(assetsDir, name), asset.body);
    writeFileSync(path.join(partial, STAMP), `${JSON.stringify({ fingerprint, builtAt: new Date().toISOString() }, null, 2)}\n`);
    const previous = `${DIST}.${process.pid}.previous`;
    if (existsSync(DIST)) renameSync(DIST, previous);
    renameSync(partial, DIST);
    rmSync(previous, { recursive: true, force: true });
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** `./x.ts` → an import of `./x.js`, left for Node to load (each file is compiled on its own). */
const relativeImportsStayImports = {
  name: 'relative-imports-stay-imports',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
    );
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  try {
    await buildServer();
    console.log(`Airlock: server compiled to ${path.relative(process.cwd(), DIST) || DIST}/ (${Date.now() - started} ms).`);
  } catch (error) {
    console.error(`Airlock: the build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file the console serves under /dashboard/. */
export interface DashboardAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/** The console's files by their name under /dashboard/ (`index.html`, `app.js`, `app.css`, `graphiql.js`, `favicon.svg`). */
export type DashboardAssets = ReadonlyMap<string, DashboardAsset>;

export const APP_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app');

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'graphiql.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** Files served as they are in src/dashboard/app, not bundled. */
const STATIC_FILES = ['index.html', 'favicon.svg'] as const;

/**
 * Bundles the browser sources of `src/dashboard/app` in memory with esbuild (Preact with JSX, uPlot,
 * the graphql-ws client and the typed documents): one `app.js` and one `app.css`, beside the
 * static `index.html` and `favicon.svg`. Takes a few hundred milliseconds; no bundle is committed.
 */
export async function bundleDashboard(appDir: string = APP_DIR): Promise<DashboardAssets> {
  // Loaded here, not by the server's start: a built server (dist/) reads the bundle instead.
  const { build } = await import('esbuild');
  const result = await build({
    // The console, and GraphiQL's fetcher (graphql-ws with the token in connection_init; see graphiql.ts).
    entryPoints: { app: path.join(appDir, 'main.tsx'), graphiql: path.join(appDir, 'graphiql.ts') },
    // TSX with Preact's automatic runtime (as src/dashboard/app/tsconfig.json tells the type check).
    jsx: 'automatic',
    jsxImportSource: 'preact',
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    // The stylesheet's url()s name files this route serves (the favicon), not files to bundle.
    external: ['/dashboard/*'],
  });
  const assets = new Map<string, DashboardAsset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    const contentType = TYPES[name];
    if (contentType) assets.set(name, { contentType, body: Buffer.from(file.contents) });
  }
  for (const name of STATIC_FILES) assets.set(name, { contentType: TYPES[name]!, body: await readFile(path.join(appDir, name)) });
  for (const name of Object.keys(TYPES)) {
    if (!assets.has(name)) throw new Error(`The console bundle has no ${name}: check src/dashboard/app.`);
  }
  return assets;
}

/** Reads a bundle written by `npm run build` (dist/src/dashboard/assets). */
export async function readBuiltDashboard(dir: string): Promise<DashboardAssets> {
  const assets = new Map<string, DashboardAsset>();
  for (const [name, contentType] of Object.entries(TYPES)) assets.set(name, { contentType, body: await readFile(path.join(dir, name)) });
  return assets;
}

export { TYPES as DASHBOARD_TYPES };

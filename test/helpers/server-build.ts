import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * What a test that needs a real server process runs: the compiled server, as `npm start` does
 * (`node dist/src/main.js`), rather than the sources through tsx's loader, which cost about a
 * second of every start. Relative to the repository root.
 */
export const SERVER_MAIN = 'dist/src/main.js';

const BUILD_SCRIPT = fileURLToPath(new URL('../../src/build.js', import.meta.url));

/**
 * Vitest global setup: compiles the server to dist/ when the sources changed since the last build
 * (npm ci's postinstall built it once; a checkout being edited usually has changed since). Once,
 * before any test file runs, so two files never rebuild it at the same time.
 */
export default async function setup(): Promise<void> {
  const build = (await import(pathToFileURL(BUILD_SCRIPT).href)) as { buildIsCurrent(): boolean; buildServer(): Promise<void> };
  if (!build.buildIsCurrent()) await build.buildServer();
}

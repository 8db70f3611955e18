/**
 * `npm start`: runs the server from dist/ (plain JavaScript: no TypeScript loader, which costs
 * about a second of every start), compiling it first when the sources changed since the last build
 * (src/build.js, about half a second; npm ci's postinstall builds it once). With
 * AIRLOCK_TOOL_MODULES set, it runs the TypeScript sources through tsx instead, as before: tool
 * modules may be TypeScript and may import the server's own files, which must then be the very
 * modules the server runs. Where dist/ cannot be written (a read-only checkout), the sources too.
 */
import { buildIsCurrent, buildServer } from './build.js';

async function compiledIfPossible() {
  if (process.env.AIRLOCK_TOOL_MODULES?.trim()) return false;
  if (buildIsCurrent()) return true;
  console.log('Airlock: compiling the server (the sources changed since the last build)…');
  try {
    await buildServer();
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/EACCES|EROFS|EPERM/.test(message)) {
      console.log(`Airlock: could not write dist/ (${message}); running the TypeScript sources instead.`);
      return false;
    }
    console.error(`Airlock: the sources do not compile: ${message}\nFix the error above (npm run typecheck shows every one), then npm start again.`);
    process.exit(1);
  }
}

if (await compiledIfPossible()) {
  await import('../dist/src/main.js');
} else {
  await import('tsx');
  await import('./main.ts');
}

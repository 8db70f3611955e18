/**
 * npm ci's postinstall, when the sources are there: compiles the server to dist/ (src/build.js)
 * and prepares the embedded database's template (dist/src/db/template-cli.js), so that a first
 * `npm start` finds both ready.
 *
 * package.json runs this file only when src/ exists. Without it (a Docker layer that installs from
 * package.json and the lockfile before the sources are copied) there is nothing to build, and
 * package.json's one-liner says so in one line and lets the install succeed. With the sources
 * present a failure is real: it stops the install, naming the step that failed and what to do,
 * rather than leaving a checkout without dist/ that only a later start would discover.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildServer, DIST, REPO_ROOT } from './build.js';

/** Prints what failed and what to do, then ends the install with a failure. */
function fail(step, detail, remedy) {
  console.error(`Airlock postinstall: ${step} failed: ${detail}\n${remedy}`);
  process.exit(1);
}

const started = Date.now();
try {
  await buildServer();
} catch (error) {
  fail(
    'compiling the server to dist/ (src/build.js)',
    error instanceof Error ? error.message : String(error),
    'Fix the source named above (npm run typecheck lists every type error), then run npm run build, or npm ci again.',
  );
}
console.log(`Airlock: server compiled to dist/ (${Date.now() - started} ms).`);

// A child process, as a start's initdb is: PGlite's memory goes back when it exits. The script
// itself never fails for want of a template (the first embedded start then runs initdb); a non-zero
// exit here means the build it runs from is broken.
const templateCli = path.join(DIST, 'src/db/template-cli.js');
const template = spawnSync(process.execPath, [templateCli], { cwd: REPO_ROOT, stdio: 'inherit' });
if (template.error || template.status !== 0) {
  fail(
    `preparing the embedded database template (${path.relative(REPO_ROOT, templateCli)})`,
    template.error ? template.error.message : `it exited with ${template.status ?? template.signal}`,
    'Run node dist/src/db/template-cli.js to see its error again; npm run build rebuilds dist/ if it is damaged.',
  );
}

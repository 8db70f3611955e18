import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module) builds. Dependencies run by Node load the CJS
    // build; without this alias Vite hands our sources the ESM build, and graphql refuses to mix
    // the two ("Cannot use GraphQLScalarType from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/pglite-template.ts', 'test/helpers/server-build.ts'],
    // Deadlines that only name a hang: on a loaded machine (CI shares these two cores with other
    // jobs; the suite must pass beside two CPU-bound processes) a PGlite app's start took over 60 s.
    // No test waits for its timeout: every wait is for a state.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Two cores: PGlite instances are memory-hungry; keep parallelism modest.
    maxWorkers: 2,
    // The files of one worker share its module graph instead of importing the server's ~1 200
    // modules again for each (a full run: 658 → 444 s on 2 cores, import 233 → 25 s summed). Sound
    // because nothing in src/ is an import-time singleton: every collaborator is built by createApp
    // and handed down, so each file's apps, databases and servers are its own; a file that changes
    // process.env puts it back in afterAll.
    isolate: false,
    reporters: ['default'],
  },
});

import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchema } from 'graphql';
import { buildSchema } from './src/graphql/schema.ts';

/**
 * `npm run codegen` writes two things from the schema the code builds, both committed;
 * test/graphql/schema-drift.test.ts fails when either differs from what codegen produces now:
 *
 * - `schema/schema.graphql`: the printed schema (sorted, no directives), reviewed in diffs.
 * - `src/graphql/client/`: typed documents (client preset) for every `graphql(...)` operation the
 *   tests send. They live under `src/`, beside the schema, not under `test/`, because the browser
 *   dashboard imports the same `graphql()` function and types; the server never imports them.
 *   An operation that names an unknown field or argument fails codegen; a result read wrongly
 *   fails `npm run typecheck`.
 */
const config: CodegenConfig = {
  schema: printSchema(buildSchema()),
  // Where `graphql(...)` operations are written: the tests and the console's sources.
  documents: ['test/**/*.ts', 'src/dashboard/app/**/*.js'],
  // Only `graphql(...)` marks an operation: several tests name their own string helper `gql`.
  pluckConfig: { globalGqlIdentifierName: 'graphql' },
  generates: {
    'schema/schema.graphql': {
      plugins: ['schema-ast'],
      config: { includeDirectives: false, sort: true },
    },
    'src/graphql/client/': {
      preset: 'client',
      // Tests and the dashboard read whole results; masking would hide fields behind `useFragment`.
      presetConfig: { fragmentMasking: false },
      config: {
        // Our house style: ESM with `.ts` specifiers, type-only imports, no TS `enum` (string literals).
        importExtension: '.ts',
        useTypeImports: true,
        enumType: 'string-literal',
        // IDs travel as strings; JSON is whatever the client sends or reads, so `unknown` until checked.
        scalars: { ID: 'string', DateTime: 'string', Date: 'string', JSON: 'unknown' },
        strictScalars: true,
      },
    },
  },
  silent: false,
};

export default config;

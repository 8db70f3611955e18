import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchema } from 'graphql';
import { buildSchema } from './src/graphql/schema.ts';

/**
 * `npm run codegen` prints the schema the code builds to `schema/schema.graphql` (sorted), which is
 * committed and reviewed in diffs; test/graphql/schema-drift.test.ts fails when they differ.
 */
const config: CodegenConfig = {
  schema: printSchema(buildSchema()),
  generates: {
    'schema/schema.graphql': {
      plugins: ['schema-ast'],
      config: { includeDirectives: false, sort: true },
    },
  },
  silent: false,
};

export default config;

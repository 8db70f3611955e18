import { readdirSync, readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { beforeAll, describe, expect, it } from 'vitest';
import config from '../../codegen.ts';

const ROOT = new URL('../../', import.meta.url);
const TYPED_DOCUMENTS = 'src/graphql/client/';

describe('`npm run codegen` outputs (run it and commit the result)', () => {
  let outputs: { filename: string; content: string }[];
  const committed = (filename: string) => readFileSync(new URL(filename, ROOT), 'utf8');
  const generated = (filename: string) => outputs.find((output) => output.filename === filename);

  beforeAll(async () => {
    outputs = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
  });

  it('should commit schema/schema.graphql as the code prints it', () => {
    const printed = generated('schema/schema.graphql');
    expect(printed, 'codegen produced no schema/schema.graphql').toBeDefined();
    expect(committed('schema/schema.graphql')).toBe(printed!.content);
  });

  it(`should commit the typed documents in ${TYPED_DOCUMENTS} as codegen makes them from the tests' graphql(...) operations`, () => {
    const documents = outputs.filter((output) => output.filename.startsWith(TYPED_DOCUMENTS));
    expect(documents.map((output) => output.filename)).toContain(`${TYPED_DOCUMENTS}graphql.ts`);
    // No file codegen no longer makes stays behind.
    expect(readdirSync(new URL(TYPED_DOCUMENTS, ROOT)).sort()).toEqual(documents.map((output) => output.filename.slice(TYPED_DOCUMENTS.length)).sort());
    for (const output of documents) expect(committed(output.filename), `${output.filename} differs from codegen's`).toBe(output.content);
  });
});

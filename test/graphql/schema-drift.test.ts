import { readdirSync, readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { beforeAll, describe, expect, it } from 'vitest';
import config, { withGeneratedNotice } from '../../codegen.ts';

const ROOT = new URL('../../', import.meta.url);
/** Where the typed documents go: the console's next to it, the tests' under test/. */
const TYPED_DOCUMENTS = ['src/dashboard/app/gql/', 'test/gql/'];

describe('`npm run codegen` outputs (run it and commit the result)', () => {
  let outputs: { filename: string; content: string }[];
  const committed = (filename: string) => readFileSync(new URL(filename, ROOT), 'utf8');
  const generated = (filename: string) => outputs.find((output) => output.filename === filename);

  beforeAll(async () => {
    const generatedNow = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
    // As `npm run codegen` writes them (its write hook adds the generated-file notice).
    outputs = generatedNow.map((output) => ({ ...output, content: withGeneratedNotice(output.filename, output.content) }));
  });

  it('should commit schema/schema.graphql as the code prints it', () => {
    const printed = generated('schema/schema.graphql');
    expect(printed, 'codegen produced no schema/schema.graphql').toBeDefined();
    expect(committed('schema/schema.graphql')).toBe(printed!.content);
  });

  it.each(TYPED_DOCUMENTS)(`should commit the typed documents in %s as codegen makes them from the graphql(...) operations`, (folder) => {
    const documents = outputs.filter((output) => output.filename.startsWith(folder));
    expect(documents.map((output) => output.filename)).toContain(`${folder}graphql.ts`);
    // No file codegen no longer makes stays behind.
    expect(readdirSync(new URL(folder, ROOT)).sort()).toEqual(documents.map((output) => output.filename.slice(folder.length)).sort());
    for (const output of documents) {
      expect(committed(output.filename), `${output.filename} differs from codegen's`).toBe(output.content);
      expect(output.content.startsWith('/* @generated'), `${output.filename} starts with a generated-file notice`).toBe(true);
    }
  });

  it("should give the console's bundle only the console's operations", () => {
    const consoleDocuments = committed('src/dashboard/app/gql/gql.ts');
    expect(consoleDocuments).toContain('ConsoleViewer');
    expect(consoleDocuments).not.toMatch(/"\s*(query|mutation|subscription) (?!Console)\w+/);
  });
});

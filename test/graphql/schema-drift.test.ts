import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import config from '../../codegen.ts';

describe('schema/schema.graphql', () => {
  it('should match what `npm run codegen` prints from the code (run it and commit the result)', async () => {
    const outputs = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
    const printed = outputs.find((output) => output.filename.endsWith('schema/schema.graphql'));
    expect(printed, 'codegen produced no schema/schema.graphql').toBeDefined();
    const committed = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printed!.content);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, validate, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { WATCH_RUN } from '../../examples/watch-run.ts';
import { buildSchema } from '../../src/graphql/schema.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Snippet {
  /** Where the snippet starts, as `README.md:<line>`. */
  readonly where: string;
  readonly source: string;
}

/** Fenced blocks of one language, with the line of their first content line. */
function fencedBlocks(file: string, language: string): Snippet[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: Snippet[] = [];
  let start = -1;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (start < 0 && line === '```' + language) start = index + 1;
    else if (start >= 0 && line === '```') {
      blocks.push({ where: `${file}:${start + 1}`, source: lines.slice(start, index).join('\n') });
      start = -1;
    }
  }
  return blocks;
}

/** The operations the README's shell recipe sends: the quoted first argument of its `gql` helper. */
function shellOperations(file: string): Snippet[] {
  return fencedBlocks(file, 'sh').flatMap((block) => {
    const [file_, line] = block.where.split(':');
    return [...block.source.matchAll(/\bgql '([^']+)'/g)].map((match) => {
      const offset = block.source.slice(0, match.index).split('\n').length - 1;
      return { where: `${file_}:${Number(line) + offset}`, source: match[1]! };
    });
  });
}

/** Problems of one snippet against the schema: syntax, validation, more than one operation. */
function problemsOf(schema: GraphQLSchema, snippet: Snippet): string[] {
  let document;
  try {
    document = parse(snippet.source);
  } catch (error) {
    return [`${snippet.where}: ${(error as Error).message}`];
  }
  const problems = validate(schema, document).map((error) => `${snippet.where}: ${error.message}`);
  const operations = document.definitions.filter((definition) => definition.kind === 'OperationDefinition');
  if (operations.length !== 1) problems.push(`${snippet.where}: holds ${operations.length} operations; show one per block`);
  return problems;
}

describe('GraphQL in the documentation', () => {
  let schema: GraphQLSchema;
  beforeAll(() => {
    schema = buildSchema();
  });

  it('should find the README snippets', () => {
    expect(fencedBlocks('README.md', 'graphql').length).toBeGreaterThan(5);
    expect(shellOperations('README.md').length).toBeGreaterThan(3);
  });

  it('should validate every ```graphql block of README.md against the schema, one operation each', () => {
    const problems = fencedBlocks('README.md', 'graphql').flatMap((block) => problemsOf(schema, block));
    expect(problems).toEqual([]);
  });

  it('should validate every operation of the README shell recipe against the schema', () => {
    const problems = shellOperations('README.md').flatMap((operation) => problemsOf(schema, operation));
    expect(problems).toEqual([]);
  });

  it('should validate the operation of examples/watch-run.ts', () => {
    expect(problemsOf(schema, { where: 'examples/watch-run.ts', source: WATCH_RUN })).toEqual([]);
  });

  it('should link only to files of the repository, and only to files that exist', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.match(/https?:\/\/(?!localhost|127\.0\.0\.1)[^\s)`'"]+/g) ?? []).toEqual([]);
    const missing = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !target.startsWith('docs/deploying.md')) // written concurrently (issue 12)
      .filter((target) => {
        try {
          readFileSync(path.join(ROOT, target));
          return false;
        } catch {
          return true;
        }
      });
    expect(missing).toEqual([]);
  });
});

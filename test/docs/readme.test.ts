import { existsSync } from 'node:fs';
import path from 'node:path';
import { parse, validate, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { WATCH_RUN } from '../../examples/watch-run.ts';
import { buildSchema } from '../../src/graphql/schema.ts';
import { anchorsOf, DOCUMENTS, externalUrls, fencedBlocks, readDocument, relativeLinks, ROOT, type Snippet } from './markdown.ts';

/** The operations a shell recipe sends: the quoted first argument of the README's `gql` helper. */
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

  it('should read the README and every page of docs/', () => {
    expect(DOCUMENTS[0]).toBe('README.md');
    expect(DOCUMENTS).toEqual(expect.arrayContaining(['docs/architecture.md', 'docs/deploying.md']));
  });

  it('should find the snippets: the first run in the README, the rest in docs/', () => {
    expect(shellOperations('README.md').length).toBeGreaterThan(3);
    expect(DOCUMENTS.flatMap((file) => fencedBlocks(file, 'graphql')).length).toBeGreaterThan(5);
  });

  it('should validate every ```graphql block against the schema, one operation each', () => {
    const problems = DOCUMENTS.flatMap((file) => fencedBlocks(file, 'graphql')).flatMap((block) => problemsOf(schema, block));
    expect(problems).toEqual([]);
  });

  it('should validate every operation of a shell recipe against the schema', () => {
    const problems = DOCUMENTS.flatMap(shellOperations).flatMap((operation) => problemsOf(schema, operation));
    expect(problems).toEqual([]);
  });

  it('should validate the operation of examples/watch-run.ts', () => {
    expect(problemsOf(schema, { where: 'examples/watch-run.ts', source: WATCH_RUN })).toEqual([]);
  });
});

describe('links in the documentation', () => {
  it('should link only to files of the repository', () => {
    expect(DOCUMENTS.flatMap(externalUrls)).toEqual([]);
  });

  it('should link only to files that exist, and to headings that exist', () => {
    const broken = DOCUMENTS.flatMap(relativeLinks).filter((link) => {
      if (!existsSync(path.join(ROOT, link.file))) return true;
      return link.anchor !== undefined && link.file.endsWith('.md') && !anchorsOf(link.file).has(link.anchor);
    });
    expect(broken.map((link) => `${link.from}: ${link.written}`)).toEqual([]);
  });

  it('should keep the README a front door (issue 29): at most 350 lines, the manual in docs/', () => {
    expect(readDocument('README.md').split('\n').length).toBeLessThanOrEqual(350);
  });

  it('should reach every page of docs/ from the README', () => {
    const linked = new Set(relativeLinks('README.md').map((link) => link.file));
    expect(DOCUMENTS.filter((file) => file !== 'README.md' && !linked.has(file))).toEqual([]);
  });

  it('should catch a link to a missing heading (the check checks)', () => {
    expect(anchorsOf('README.md').has('requirements')).toBe(true);
    expect(anchorsOf('README.md').has('no-such-heading')).toBe(false);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The documentation as the tests read it: the README (the front door) and every page of docs/.
 * A page added to docs/ is covered by the snippet, link and query-cost tests without naming it.
 */

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Repository-relative paths of README.md and of every docs/*.md, README first. */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function readDocument(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

export interface Snippet {
  /** Where the snippet starts, as `<file>:<line>`. */
  readonly where: string;
  readonly source: string;
}

/** Fenced blocks of one language, with the line of their first content line. */
export function fencedBlocks(file: string, language: string): Snippet[] {
  const lines = readDocument(file).split('\n');
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

/** The text outside fenced blocks (a `#` in a shell block is a comment, not a heading). */
function proseLines(file: string): string[] {
  let fenced = false;
  return readDocument(file)
    .split('\n')
    .filter((line) => {
      if (line.trimStart().startsWith('```')) fenced = !fenced;
      else return !fenced;
      return false;
    });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a document's headings give it. */
export function anchorsOf(file: string): Set<string> {
  return new Set(proseLines(file).flatMap((line) => (/^#{1,6} (.+)$/.exec(line) ? [anchorOf(/^#{1,6} (.+)$/.exec(line)![1]!)] : [])));
}

export interface Link {
  /** The document holding the link. */
  readonly from: string;
  /** As written, e.g. `docs/api.md#users-and-tokens`. */
  readonly written: string;
  /** Repository-relative path of the target (the document itself for `#anchor`). */
  readonly file: string;
  readonly anchor: string | undefined;
}

/** Every relative markdown link and image of a document, outside fenced blocks. */
export function relativeLinks(file: string): Link[] {
  const prose = proseLines(file).join('\n');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((written) => !/^[a-z]+:/i.test(written))
    .map((written) => {
      const [target, anchor] = written.split('#') as [string, string | undefined];
      const resolved = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      return { from: file, written, file: resolved, anchor };
    });
}

/** Absolute URLs in a document's prose and code alike, other than this machine's. */
export function externalUrls(file: string): string[] {
  return readDocument(file).match(/https?:\/\/(?!localhost|127\.0\.0\.1)[^\s)`'"]+/g) ?? [];
}

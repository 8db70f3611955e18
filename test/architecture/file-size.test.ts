import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Files a reader can hold in their head (docs/architecture.md): a hand-written file of src/, bench/
 * or examples/ has at most 300 lines, or says in its header (its first 40 lines) why it is one piece
 * with the words "Over 300 lines on purpose". Generated files (`@generated` in their first line)
 * are left out. Test files are too: one per module, they hold that module's cases, however many.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['src', 'bench', 'examples'];
const LIMIT = 300;
const SOURCE = /\.(ts|tsx|js|mjs)$/;

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).includes('node_modules'));
}

describe('file size', () => {
  const files = FOLDERS.flatMap(sourceFiles);

  it('should find the sources it checks', () => {
    expect(files).toContain(path.join('src', 'app.ts'));
    expect(files.some((file) => file.startsWith(`bench${path.sep}`))).toBe(true);
  });

  it(`should keep every hand-written file at most ${LIMIT} lines, or give the reason in its header`, () => {
    const over = files.filter((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      if (lines.length <= LIMIT || lines[0]!.includes('@generated')) return false;
      return !lines.slice(0, 40).join('\n').includes('Over 300 lines on purpose');
    });
    expect(over, 'split these by job, or say in the header why each is one piece').toEqual([]);
  });
});

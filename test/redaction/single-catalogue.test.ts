import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_TERMS } from '../../src/redaction/credentials.ts';

/**
 * src/redaction/ is the ONE catalogue of secret shapes and credential names (issue 13). This fails
 * when a second list grows anywhere else in src/: a secret-shape prefix in source text, a run of
 * credential names as string literals, or credential names joined into a regex alternation.
 */

const SRC = path.resolve(import.meta.dirname, '../../src');
/** The catalogue itself, and generated code (operation documents name fields such as `token`). */
const EXEMPT = [path.join(SRC, 'redaction'), path.join(SRC, 'graphql', 'client')];

/** Fragments only a secret-shape pattern (or a fake secret) would spell out. */
const SHAPE_MARKERS = ['AKIA', 'ASIA[', 'AIza', 'xox', 'ghp_', 'gh[', 'github_pat_', 'eyJ', 'SG\\.', 'sk-[', 'sk_live', 'whsec', 'PRIVATE KEY'];

/** Every spelling of every catalogue term: `api_key`, `apikey`, `apiKey`, `API_KEY`. */
const SPELLINGS = new Set(
  CREDENTIAL_TERMS.flatMap(({ term }) => {
    const words = term.split('_');
    const camel = words[0] + words.slice(1).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
    return [term, words.join(''), camel, term.toUpperCase()];
  }),
);
const SPELLING = [...SPELLINGS].sort((a, b) => b.length - a.length).join('|');
/** Two credential names joined by `|`: the start of an alternation such as `/password|secret/`. */
const ALTERNATION = new RegExp(`(?<![A-Za-z0-9_])(?:${SPELLING})\\|(?:${SPELLING})(?![A-Za-z0-9_])`, 'i');
/** A quoted string literal that is exactly a credential name (optionally a pino `*.` path). */
const LITERAL = new RegExp(`(['"])(?:\\*\\.)?(${SPELLING})\\1`, 'g');
/** Fewer than this many distinct credential-name literals in one file is not a list. */
const LIST_LENGTH = 4;

function sourceFiles(dir: string): string[] {
  if (EXEMPT.includes(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** What in `source` looks like a second catalogue; empty when nothing does. */
export function secondListsIn(source: string): string[] {
  const found: string[] = [];
  for (const marker of SHAPE_MARKERS) if (source.includes(marker)) found.push(`secret-shape marker ${marker}`);
  const alternation = ALTERNATION.exec(source);
  if (alternation) found.push(`credential-name alternation ${alternation[0]}`);
  const literals = new Set([...source.matchAll(LITERAL)].map((match) => match[2]!.toLowerCase()));
  if (literals.size >= LIST_LENGTH) found.push(`credential-name literals ${[...literals].sort().join(', ')}`);
  return found;
}

describe('one redaction catalogue', () => {
  it('should keep every secret shape and credential-name list in src/redaction/', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((file) => secondListsIn(readFileSync(file, 'utf8')).map((what) => `${path.relative(SRC, file)}: ${what}`));
    expect(offenders).toEqual([]);
  });

  it('should catch each kind of second list (the checker itself)', () => {
    expect(secondListsIn("const paths = ['authorization', 'apiKey', 'token', 'password', '*.secret'];")).toEqual([
      'credential-name literals apikey, authorization, password, secret, token',
    ]);
    expect(secondListsIn('const SECRET = /password|secret|token/i;')).toEqual(['credential-name alternation password|secret']);
    expect(secondListsIn('const KEY = /\\bsk-[A-Za-z0-9]{20,}/g;')).toEqual(['secret-shape marker sk-[']);
    expect(secondListsIn('const AWS = /AKIA[0-9A-Z]{16}/;')).toEqual(['secret-shape marker AKIA']);
    // Ordinary code: a field or two named like a credential is not a list.
    expect(secondListsIn("if (isCredentialColumn(name)) return { reason: 'credential' }; const header = 'authorization';")).toEqual([]);
    expect(secondListsIn('return `alk_${randomBytes(32).toString(\'base64url\')}`;')).toEqual([]);
  });
});

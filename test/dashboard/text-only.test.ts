import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const APP = path.resolve(import.meta.dirname, '../../src/dashboard/app');

/** APIs that parse a string as HTML or run it: the console must never use one (text nodes only). */
const FORBIDDEN = [
  /dangerouslySetInnerHTML/,
  /\binnerHTML\b/,
  /\bouterHTML\b/,
  /insertAdjacentHTML/,
  /DOMParser/,
  /createContextualFragment/,
  /document\.write/,
  /\bsrcdoc\b/,
  /\beval\s*\(/,
  /new\s+Function\s*\(/,
];

/**
 * An href whose value is interpolated data rather than a fixed route (runHref encodes ids behind
 * `#/runs/`; `item.href` is the console's own navigation list): htm's `href=${…}` or JSX's `href={…}`.
 */
const DATA_HREF = /href=\$?\{(?!runHref\(|href\}|item\.href\})/;

export function violationsIn(source: string): string[] {
  const found = FORBIDDEN.filter((pattern) => pattern.test(source)).map(String);
  if (DATA_HREF.test(source)) found.push('href from data');
  return found;
}

describe('the console renders text nodes only', () => {
  // The console's own sources (the generated typed documents hold no markup).
  const files = (readdirSync(APP, { recursive: true }) as string[]).filter((name) => /\.(js|ts|tsx|html)$/.test(name) && !name.startsWith('gql'));

  it('finds its sources', () => {
    expect(files).toContain('main.tsx');
  });

  it.each(files)('%s uses no HTML-parsing API and takes no href from data', (name) => {
    expect(violationsIn(readFileSync(path.join(APP, name), 'utf8'))).toEqual([]);
  });

  it('the scan catches each forbidden API', () => {
    for (const sample of [
      'el.innerHTML = x',
      'h("div", { dangerouslySetInnerHTML: { __html: x } })',
      'el.insertAdjacentHTML("beforeend", x)',
      'new DOMParser().parseFromString(x, "text/html")',
      'document.write(x)',
      'html`<a href=${link}>x</a>`',
      '<a href={link}>x</a>',
    ]) {
      expect(violationsIn(sample), sample).not.toEqual([]);
    }
    expect(violationsIn('html`<a href=${runHref(run.id)}>x</a>`')).toEqual([]);
    expect(violationsIn('<a href={runHref(run.id)}>x</a>')).toEqual([]);
  });
});

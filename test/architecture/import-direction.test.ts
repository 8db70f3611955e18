import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers read top to bottom: graphql → services → runtime → access → tools, with providers and
 * db as adapters behind interfaces the runtime owns (docs/architecture.md). The pure core —
 * `tools/`, `access/`, `runtime/` — imports no GraphQL and no SQL, and no room above it; `redaction/`
 * (the secret catalogue) imports nothing of Airlock at all.
 */

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Packages that belong to the adapters and the API, never to the pure core. */
const FORBIDDEN_PACKAGES = [
  /^graphql($|\/|-)/,
  /^@pothos\//,
  /^@graphql-/,
  /^kysely/,
  /^pg($|\/)/,
  /^@electric-sql\//,
  /^ws$/,
  /^ioredis/,
  // Metrics and the tracing SDK belong to src/observability/; the core speaks only @opentelemetry/api.
  /^prom-client/,
  /^@opentelemetry\/(?!api$)/,
];

/** For each pure room, the rooms of src/ it may import (besides itself). */
const ALLOWED_ROOMS: Record<string, readonly string[]> = {
  tools: ['redaction', 'errors.ts'],
  access: ['tools', 'redaction', 'errors.ts'],
  runtime: ['access', 'tools', 'redaction', 'errors.ts'],
  // The one secret catalogue: a leaf every room may use, importing nothing of Airlock.
  redaction: [],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every module specifier a file names: static imports and re-exports, and `import('…')` with a literal. */
export function specifiersOf(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/\b(?:import|export)\s[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of source.matchAll(/\bimport\s*['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found;
}

/** The room of src/ a relative specifier lands in (`runtime`, `db`, `config.ts`…), or null for a package. */
function roomOf(file: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const target = path.relative(SRC, path.resolve(path.dirname(file), specifier));
  return target.startsWith('..') ? `outside src (${target})` : target.split(path.sep)[0]!;
}

export function violationsOf(room: string, file: string, source: string): string[] {
  const allowed = new Set([room, ...ALLOWED_ROOMS[room]!]);
  return specifiersOf(source).flatMap((specifier) => {
    const target = roomOf(file, specifier);
    if (target === null) {
      if (specifier.startsWith('node:')) return [];
      return FORBIDDEN_PACKAGES.some((pattern) => pattern.test(specifier)) ? [`${specifier} (an adapter's package)`] : [];
    }
    return allowed.has(target) ? [] : [`${specifier} (room ${target})`];
  });
}

describe('import direction', () => {
  for (const room of Object.keys(ALLOWED_ROOMS)) {
    it(`should keep src/${room}/ free of GraphQL, SQL and the rooms above it`, () => {
      const files = sourceFiles(path.join(SRC, room));
      expect(files.length).toBeGreaterThan(0);
      const violations = files.flatMap((file) =>
        violationsOf(room, file, readFileSync(file, 'utf8')).map((what) => `${path.relative(SRC, file)} imports ${what}`),
      );
      expect(violations).toEqual([]);
    });
  }

  it('should catch each kind of forbidden import (the checker itself)', () => {
    const file = path.join(SRC, 'runtime', 'loop.ts');
    const source = [
      "import { sql } from 'kysely';",
      "import type { Db } from '../db/database.ts';",
      "export { builder } from '../graphql/builder.ts';",
      "const pg = await import('pg');",
      "import 'graphql';",
      "import type { Services } from '../context.ts';",
      "import { decide } from '../access/gate.ts';",
      "import { z } from 'zod';",
      "import { createHash } from 'node:crypto';",
      "import { Counter } from 'prom-client';",
      "import { trace } from '@opentelemetry/api';",
      "import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';",
    ].join('\n');
    expect(violationsOf('runtime', file, source).sort()).toEqual(
      [
      'kysely (an adapter\'s package)',
      '../db/database.ts (room db)',
      '../graphql/builder.ts (room graphql)',
      'graphql (an adapter\'s package)',
      'pg (an adapter\'s package)',
      '../context.ts (room context.ts)',
      'prom-client (an adapter\'s package)',
      '@opentelemetry/sdk-trace-base (an adapter\'s package)',
      ].sort(),
    );
    expect(violationsOf('tools', path.join(SRC, 'tools', 'registry.ts'), "import type { GateInput } from '../access/gate.ts';")).toEqual([
      '../access/gate.ts (room access)',
    ]);
  });
});

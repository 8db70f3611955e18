import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house (docs/architecture.md): every room of src/ — a folder, or a file directly under it —
 * may import only the rooms its row names, so no import runs from a lower floor to a higher one.
 * The pure core (`tools/`, `access/`, `runtime/`, `redaction/`) and the wire adapters (`providers/`,
 * `remote-mcp/`) also import no package of another adapter or of the API: no GraphQL, no SQL, no
 * Redis, no metrics SDK.
 */

const SRC = path.resolve(import.meta.dirname, '../../src');

/** For each room of src/, the rooms it may import (besides itself), from the top floor down. */
const ALLOWED_ROOMS: Record<string, readonly string[]> = {
  // The processes' entry points and the composition root, the only room that builds the adapters.
  'main.ts': ['app.ts', 'config.ts', 'db'],
  'demo.ts': ['app.ts', 'config.ts', 'db', 'runtime', 'services'],
  'app.ts': ['server.ts', 'context.ts', 'services', 'runtime', 'tools', 'db', 'cluster', 'observability', 'config.ts', 'logger.ts'],
  'server.ts': ['graphql', 'mcp', 'dashboard', 'observability', 'context.ts', 'services', 'config.ts', 'logger.ts'],
  // The doors clients come in by: they call services and never each other.
  graphql: ['context.ts', 'services', 'runtime', 'access', 'tools', 'db', 'remote-mcp', 'global-id.ts', 'errors.ts'],
  mcp: ['services', 'runtime', 'access', 'tools', 'db', 'observability', 'global-id.ts', 'config.ts', 'logger.ts'],
  dashboard: ['logger.ts'],
  // What every GraphQL request receives: the layer's narrow deps (their types) and the viewer's lookup.
  'context.ts': ['services', 'runtime', 'tools', 'db', 'logger.ts'],
  services: ['runtime', 'access', 'tools', 'providers', 'remote-mcp', 'db', 'observability', 'errors.ts', 'logger.ts'],
  // Adapters: each implements ports the rooms above it declare.
  providers: ['runtime', 'tools', 'db'],
  'remote-mcp': ['tools'],
  cluster: ['runtime', 'db', 'config.ts', 'logger.ts'],
  observability: ['runtime', 'db', 'config.ts', 'logger.ts'],
  db: ['runtime', 'tools', 'redaction', 'config.ts'],
  // The pure core.
  runtime: ['access', 'tools', 'redaction', 'errors.ts'],
  access: ['tools', 'redaction', 'errors.ts'],
  tools: ['redaction', 'errors.ts'],
  // Leaves every room may use.
  'logger.ts': ['redaction'],
  redaction: [],
  'config.ts': [],
  'errors.ts': [],
  'global-id.ts': [],
};

/** Rooms that import no package of another adapter or of the API. */
const WITHOUT_ADAPTER_PACKAGES = new Set(['tools', 'access', 'runtime', 'redaction', 'providers', 'remote-mcp']);

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

/** TypeScript sources only: the plain-JavaScript start scripts (`start.js`, `build.js`) run before any of it. */
function sourceFiles(entry: string): string[] {
  if (!statSync(entry).isDirectory()) return /\.tsx?$/.test(entry) ? [entry] : [];
  return readdirSync(entry).flatMap((name) => sourceFiles(path.join(entry, name)));
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

/** What one file of `room` imports that its row does not allow, each as `specifier (why)`. */
export function violationsOf(room: string, file: string, source: string): string[] {
  const allowed = new Set([room, ...(ALLOWED_ROOMS[room] ?? [])]);
  return specifiersOf(source).flatMap((specifier) => {
    const target = roomOf(file, specifier);
    if (target === null) {
      if (!WITHOUT_ADAPTER_PACKAGES.has(room) || specifier.startsWith('node:')) return [];
      return FORBIDDEN_PACKAGES.some((pattern) => pattern.test(specifier)) ? [`${specifier} (an adapter's package)`] : [];
    }
    return allowed.has(target) ? [] : [`${specifier} (room ${target})`];
  });
}

/** The composition root, the one file that may name the parts it builds (`AppServices`). */
const APP = path.join(SRC, 'app.ts');
const APP_PARTS_TYPE = 'AppServices';

/**
 * How a file (other than app.ts) reaches app.ts's bag of parts: a named import or re-export of it,
 * a namespace import of app.ts, or an inline `import('…/app.ts').AppServices` type.
 */
export function bagImportsOf(file: string, source: string): string[] {
  const fromApp = (specifier: string) => specifier.startsWith('.') && path.resolve(path.dirname(file), specifier) === APP;
  const found: string[] = [];
  for (const match of source.matchAll(/\b(?:import|export)\s([^'";]*?)\sfrom\s*['"]([^'"]+)['"]/g)) {
    const [, clause, specifier] = match as unknown as [string, string, string];
    if (!fromApp(specifier)) continue;
    if (/\*\s*as\s/.test(clause)) found.push(`* from ${specifier}`);
    const named = clause.match(/\{([^}]*)\}/)?.[1] ?? '';
    for (const name of named.split(',')) {
      const imported = name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0];
      if (imported === APP_PARTS_TYPE) found.push(`${APP_PARTS_TYPE} from ${specifier}`);
    }
  }
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)\s*\.\s*([A-Za-z_$][\w$]*)/g)) {
    if (fromApp(match[1]!) && match[2] === APP_PARTS_TYPE) found.push(`import('${match[1]}').${APP_PARTS_TYPE}`);
  }
  return found;
}

/** The names a module exports by declaration or by an export list. */
export function exportedNamesOf(source: string): string[] {
  const names = [...source.matchAll(/\bexport\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:interface|type|function\*?|const|let|var|class|enum)\s+([A-Za-z_$][\w$]*)/g)].map((match) => match[1]!);
  for (const match of source.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const name of match[1]!.split(',')) {
      const exported = name.trim().replace(/^type\s+/, '').split(/\s+as\s+/).at(-1)!;
      if (exported) names.push(exported);
    }
  }
  return names;
}

describe('import direction', () => {
  it('should give every room of src/ a row of the table', () => {
    const rooms = readdirSync(SRC).filter((name) => sourceFiles(path.join(SRC, name)).length > 0);
    expect(rooms.filter((room) => !(room in ALLOWED_ROOMS))).toEqual([]);
    expect(Object.keys(ALLOWED_ROOMS).filter((room) => !rooms.includes(room))).toEqual([]);
  });

  for (const room of Object.keys(ALLOWED_ROOMS)) {
    it(`should let src/${room} import only ${ALLOWED_ROOMS[room]!.join(', ') || 'nothing of Airlock'}`, () => {
      const violations = sourceFiles(path.join(SRC, room)).flatMap((file) =>
        violationsOf(room, file, readFileSync(file, 'utf8')).map((what) => `${path.relative(SRC, file)} imports ${what}`),
      );
      expect(violations).toEqual([]);
    });
  }

  // Issue 29, item 5: the app's parts are built once in app.ts and handed to nobody whole; each
  // consumer (the GraphQL context, /mcp, the run host, the MCP catalogue) declares its own deps.
  it('should let no file of src/ but app.ts import the bag of the app\'s parts', () => {
    const files = sourceFiles(SRC).filter((file) => file !== APP);
    const reaching = files.flatMap((file) => bagImportsOf(file, readFileSync(file, 'utf8')).map((what) => `${path.relative(SRC, file)} imports ${what}`));
    expect(reaching).toEqual([]);
    expect(exportedNamesOf(readFileSync(APP, 'utf8'))).toContain(APP_PARTS_TYPE);
  });

  it('should give the GraphQL context its own narrow deps, not a Services bag', () => {
    const exported = exportedNamesOf(readFileSync(path.join(SRC, 'context.ts'), 'utf8'));
    expect(exported).not.toContain('Services');
    expect(exported).toEqual(expect.arrayContaining(['GraphqlDeps', 'Context', 'createContext']));
  });

  it('should catch each way of reaching the bag, and a Services export (the checker itself)', () => {
    const door = path.join(SRC, 'graphql', 'types', 'runs.ts');
    expect(bagImportsOf(door, "import type { AppServices } from '../../app.ts';")).toEqual(['AppServices from ../../app.ts']);
    expect(bagImportsOf(path.join(SRC, 'main.ts'), "import {\n  createApp,\n  type AppServices as Bag,\n} from './app.ts';")).toEqual(['AppServices from ./app.ts']);
    expect(bagImportsOf(path.join(SRC, 'mcp', 'serve.ts'), "export type { AppServices } from '../app.ts';")).toEqual(['AppServices from ../app.ts']);
    expect(bagImportsOf(path.join(SRC, 'server.ts'), "import * as app from './app.ts';")).toEqual(['* from ./app.ts']);
    expect(bagImportsOf(path.join(SRC, 'server.ts'), "type Parts = import('./app.ts').AppServices;")).toEqual(["import('./app.ts').AppServices"]);
    // Other names of app.ts, and a same-named type of another module, are not the bag.
    expect(bagImportsOf(path.join(SRC, 'demo.ts'), "import { assembleParts, type AppParts } from './app.ts';")).toEqual([]);
    expect(bagImportsOf(door, "import type { AppServices } from '../../services/app.ts';")).toEqual([]);
    expect(exportedNamesOf('/** The bag. */\nexport interface Services {\n  readonly db: Db;\n}')).toEqual(['Services']);
    expect(exportedNamesOf('interface Services {}\nexport type { Services as Bag, Context };')).toEqual(['Bag', 'Context']);
  });

  it('should catch each kind of forbidden import (the checker itself)', () => {
    const file = path.join(SRC, 'runtime', 'loop.ts');
    const source = [
      "import { sql } from 'kysely';",
      "import type { Db } from '../db/database.ts';",
      "export { builder } from '../graphql/builder.ts';",
      "const pg = await import('pg');",
      "import 'graphql';",
      "import type { Context } from '../context.ts';",
      "import { checkGate } from '../access/gate.ts';",
      "import { z } from 'zod';",
      "import { createHash } from 'node:crypto';",
      "import { Counter } from 'prom-client';",
      "import { trace } from '@opentelemetry/api';",
      "import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';",
    ].join('\n');
    expect(violationsOf('runtime', file, source).sort()).toEqual(
      [
        "kysely (an adapter's package)",
        '../db/database.ts (room db)',
        '../graphql/builder.ts (room graphql)',
        "graphql (an adapter's package)",
        "pg (an adapter's package)",
        '../context.ts (room context.ts)',
        "prom-client (an adapter's package)",
        "@opentelemetry/sdk-trace-base (an adapter's package)",
      ].sort(),
    );
    expect(violationsOf('tools', path.join(SRC, 'tools', 'registry.ts'), "import type { GateInput } from '../access/gate.ts';")).toEqual([
      '../access/gate.ts (room access)',
    ]);
  });

  it('should catch an import that climbs back up from an outer room (the checker itself)', () => {
    const service = path.join(SRC, 'services', 'mcp-servers.ts');
    const climbing = ["import type { Context } from '../context.ts';", "import { decodeIdFor } from '../graphql/ids.ts';", "import { sql } from 'kysely';"].join('\n');
    expect(violationsOf('services', service, climbing)).toEqual(['../context.ts (room context.ts)', '../graphql/ids.ts (room graphql)']);
    expect(violationsOf('mcp', path.join(SRC, 'mcp', 'serve.ts'), "import { decodeIdFor } from '../graphql/ids.ts';")).toEqual([
      '../graphql/ids.ts (room graphql)',
    ]);
    expect(violationsOf('remote-mcp', path.join(SRC, 'remote-mcp', 'tools.ts'), "import { mcpGroup } from '../services/mcp-catalog.ts';")).toEqual([
      '../services/mcp-catalog.ts (room services)',
    ]);
    // A room missing from the table may import nothing but itself, and the row test above names it.
    expect(violationsOf('attic', path.join(SRC, 'attic', 'a.ts'), "import { x } from '../errors.ts';")).toEqual(['../errors.ts (room errors.ts)']);
  });
});

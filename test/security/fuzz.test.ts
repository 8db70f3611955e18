import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyToolState, type ToolState } from '../../src/access/availability.ts';
import { notPermittedError, toolFailedError, type GateInput } from '../../src/access/gate.ts';
import type { Db } from '../../src/db/database.ts';
import { saveGrant } from '../../src/db/repositories/grants.ts';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { countCharacters, redact, REDACTED_MAX_CHARS, TRUNCATION_SUFFIX } from '../../src/redaction/redact.ts';
import { decodeArguments, invokeTool, type InvokeOptions } from '../../src/runtime/tool-seam.ts';
import { boundToolResult, MAX_CONTENT_BYTES, middleTruncationMarker, TRUNCATION_MODES, truncationMarker } from '../../src/tools/bounds.ts';
import { ARTIFACTS_OMITTED_LABEL, MIN_ARTIFACT_BYTES } from '../../src/tools/artifact-bounds.ts';
import { builtinTools } from '../../src/tools/builtins.ts';
import { createRegistry } from '../../src/tools/registry.ts';
import { ToolResult, type Artifact } from '../../src/tools/result.ts';
import { QUARANTINE_CLOSE, QUARANTINE_OPEN, quarantinedContent } from '../../src/tools/quarantine.ts';
import type { Actor, Tool } from '../../src/tools/tool.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';
import { insertActor, toolDataOver } from '../tools/builtin/helpers.ts';

/**
 * Fuzzing with fast-check (issue 7): arbitrary tool arguments through the one invocation seam, the
 * bounding seam on arbitrary content and artifacts, the redactor, and every GraphQL mutation with
 * arbitrary variables. Run counts are modest so the file stays well under its time budget; a failure
 * prints the seed and the shrunk counterexample.
 */

// ── shared helpers

interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}
/** Node 20 has these (ES2024); the project's lib is ES2023. */
const isWellFormed = (text: string): boolean => (text as unknown as WellFormedString).isWellFormed();
const toWellFormed = (text: string): string => (text as unknown as WellFormedString).toWellFormed();
const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Valid UTF-8 all the way: well-formed UTF-16 that survives an encode/decode round trip. */
function expectValidUtf8(text: unknown): void {
  expect(typeof text).toBe('string');
  expect(isWellFormed(text as string)).toBe(true);
  expect(Buffer.from(text as string, 'utf8').toString('utf8')).toBe(text);
}

/** Text that tends to break things: lone surrogates, NUL, control and format characters, look-alikes, tags. */
const hostileFragment = fc.constantFrom(
  '\u0000', '\ud800', '\udfff', '😀', '\u200b', '\u202e', '\ufeff', 'é', 'e\u0301', '\uff1c', '\uff1e', '\u2039',
  '<|im_start|>', '<|IM_END|>', '[INST]', '[/inst]', '<<SYS>>', '<|start|>', '<|message|>', '<start_of_turn>',
  QUARANTINE_OPEN, QUARANTINE_CLOSE, '< / tool_output_quarantine >', '</tool_output_\u200bquarantine>',
  '\uff1c/tool_output_quarantine\uff1e', '\uff1c\uff0f\uff54\uff4f\uff4f\uff4c\uff3f\uff4f\uff55\uff54\uff50\uff55\uff54\uff3f\uff51\uff55\uff41\uff52\uff41\uff4e\uff54\uff49\uff4e\uff45\uff1e',
  "'; drop table users; --", '\\', '"', '\n', '\r\n', ' ', '…', '%00', '${x}', '{{x}}',
  // DeepSeek's tokens and the look-alikes an NFKC-normalising tokenizer folds back into tokens.
  '<｜tool▁calls▁begin｜>', '<|tool▁sep|>', '<｜User｜>', '\uff5c', '\u2581', '［INST］', '＜|im_start|＞', '<|ｉｍ_ｅｎｄ|>', '﹤|end|﹥', '𝐢',
);
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(fc.oneof(hostileFragment, fc.string({ maxLength: 8 })), { maxLength: 8 }).map((parts) => parts.join('')),
);

/** The reader's view of envelope tags (what the sanitiser must neutralise): NFKC-folded, format characters dropped. */
function envelopeTagCount(text: string): number {
  return text.normalize('NFKC').replace(/\p{Cf}/gu, '').match(/<\s*\/?\s*tool_output_quarantine/gi)?.length ?? 0;
}

const CONTROL_TOKEN = /<\|[\w.\-\u2581]{1,64}\|>|\[\/?(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]|<<\/?SYS>>|<(?:start|end)_of_turn>/i;

// ── (a) tool arguments through invokeTool

const INVALID_PREFIX = (name: string) => `Error: invalid arguments for tool "${name}": `;

const TABLES = ['customers', 'orders', 'records.customers', 'RECORDS.orders', ' orders ', 'nope', 'pg_catalog.pg_user', 'public.users', '"customers"', 'customers;--'];
const COLUMNS = ['id', 'name', 'email', 'password_hash', 'status', 'total', 'customer_id', 'created_at', 'ID', 'nope', '"id"', 'id; drop table x'];
const scalar = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('1', '3', '42', 'shipped', 'true', '2025-01-31', '1e309', '-0'));
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const withoutUndefined = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined));

/** Arguments close to valid for each built-in, so the fuzzer also reaches the data layer. */
const nearlyValid: Record<string, fc.Arbitrary<unknown>> = {
  read_records: fc
    .record({
      table: maybe(fc.oneof(fc.constantFrom(...TABLES), hostileString)),
      filters: maybe(fc.array(fc.record({ column: fc.oneof(fc.constantFrom(...COLUMNS), hostileString), value: scalar }), { maxLength: 6 })),
      limit: maybe(fc.oneof(fc.integer({ min: -5, max: 60 }), fc.double())),
      offset: maybe(fc.oneof(fc.integer({ min: -5, max: 10_005 }), fc.double())),
    })
    .map(withoutUndefined),
  update_record: fc
    .record({
      table: maybe(fc.oneof(fc.constantFrom(...TABLES), hostileString)),
      key: maybe(fc.record({ column: fc.oneof(fc.constantFrom(...COLUMNS), hostileString), value: scalar })),
      changes: maybe(fc.dictionary(fc.oneof(fc.constantFrom(...COLUMNS, '__proto__', 'constructor'), hostileString), scalar, { maxKeys: 22 })),
    })
    .map(withoutUndefined),
  get_env: fc.record({ prefix: maybe(fc.oneof(fc.constantFrom('', 'AIRLOCK_', 'database', 'PG'), hostileString)) }).map(withoutUndefined),
  get_env_raw: fc.record({ prefix: maybe(fc.oneof(fc.constantFrom('', 'AIRLOCK_'), hostileString)) }).map(withoutUndefined),
  fetch_logs: fc.record({ limit: maybe(fc.oneof(fc.integer({ min: -5, max: 250 }), fc.double(), hostileString)) }).map(withoutUndefined),
};

/**
 * Arguments that once made a built-in throw (PostgreSQL refuses a NUL in a bound text parameter);
 * replayed on every run, for the admin and for the user, as regressions.
 */
const KNOWN_CRASHERS: Record<string, unknown[]> = {
  read_records: [{ table: 'cu\u0000' }, { table: 'customers', filters: [{ column: 'name', value: 'a\u0000' }] }],
  update_record: [
    { table: '\u0000', key: { column: '\u0000', value: 0 }, changes: { id: '' } },
    { table: 'orders', key: { column: 'id', value: '1\u0000' }, changes: { status: 'x' } },
    { table: 'orders', key: { column: 'id', value: 1 }, changes: { status: 'x\u0000' } },
  ],
};

/** Anything a provider could hand over as arguments: JSON values, JSON text, broken text, near misses. */
function argumentsFor(tool: Tool, keys: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue(),
    fc.json(),
    hostileString,
    fc.constantFrom(undefined, null, '', '  ', '[]', '{}', 'null', '{"__proto__":{"x":1}}', '{"a":1', '1e400'),
    fc.dictionary(fc.oneof(fc.constantFrom(...keys, 'extra'), hostileString), fc.jsonValue(), { maxKeys: 4 }),
    fc.dictionary(fc.constantFrom(...keys, 'extra'), fc.jsonValue(), { maxKeys: 4 }).map((value) => JSON.stringify(value)),
    nearlyValid[tool.name] ?? fc.constant({}),
  );
}

describe.each(TEST_DATABASES)('fuzz: arbitrary arguments against every built-in tool through invokeTool (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let db: Db;
  let admin: Actor;
  let reader: Actor;
  const registry = createRegistry([{ source: 'builtin', tools: builtinTools() }]);
  // Every built-in switched on: the fuzzer must reach the tools that are off by default too.
  const everythingOn: ToolState = { ...emptyToolState(), tools: new Map(registry.all().map((tool) => [tool.name, true])) };
  const logged: string[] = [];
  const logger = { info: () => undefined, warn: () => undefined, error: (obj: object, msg?: string) => void logged.push(`${msg}: ${String((obj as { err?: unknown }).err)}`) };
  let options: (actor: Actor) => InvokeOptions;

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    db = opened.handle.db;
    await seedRecords(db);
    admin = await insertActor(db, 'fuzz-admin', true);
    reader = await insertActor(db, 'fuzz-reader', false);
    await saveGrant(db, reader.id, 'customers', 'READ');
    await saveGrant(db, reader.id, 'orders', 'WRITE');
    const data = toolDataOver(db, kind, {
      environment: { AIRLOCK_MASTER_KEY: 'k'.repeat(44), DATABASE_URL: 'postgres://u:pw@h/db', HOME: '/home/fuzz', NOTE: 'sk-0123456789abcdefghijklmnop \ud800' },
      recentLogs: (limit) => Array.from({ length: Math.min(limit, 300) }, (_unused, index) => `line ${index} token=abc${index} \u0000 é`),
    });
    options = (actor) => {
      const gate: GateInput = { registry, state: everythingOn, actor, allowList: null };
      return { gate, logger, quarantine: false, context: { actor, signal: new AbortController().signal, runId: randomUUID(), data } };
    };
  });

  afterAll(async () => {
    await dispose?.();
  });

  it.each(builtinTools().map((tool) => ({ tool, name: tool.name })))(
    'should answer $name with a bounded, valid UTF-8 result for any arguments, as admin and as a user',
    async ({ tool }) => {
      const keys = Object.keys((registry.parametersSchema(tool.name)?.properties as Record<string, unknown> | undefined) ?? {});
      await fc.assert(
        fc.asyncProperty(fc.boolean(), argumentsFor(tool, keys), async (asAdmin, raw) => {
          const actor = asAdmin ? admin : reader;
          logged.length = 0;
          const outcome = await invokeTool({ id: 'call_fuzz', name: tool.name, arguments: raw }, options(actor));
          expectValidUtf8(outcome.content);
          expect(bytesOf(outcome.content)).toBeLessThanOrEqual(MAX_CONTENT_BYTES);
          expect(bytesOf(JSON.stringify(outcome.artifacts))).toBeLessThanOrEqual(50_000);
          if (outcome.isError) expect(outcome.artifacts).toEqual([]);
          if (tool.requiresAdmin && !asAdmin) {
            expect(outcome.content).toBe(notPermittedError(tool.name));
            return;
          }
          const decoded = decodeArguments(raw); // the seam's own decoding: empty means `{}`, text is JSON
          const valid = decoded.ok && tool.parameters.safeParse(decoded.value).success;
          if (!valid) {
            expect(outcome.isError).toBe(true);
            expect(outcome.content.startsWith(INVALID_PREFIX(tool.name)), outcome.content).toBe(true);
          } else {
            expect(outcome.content.startsWith(INVALID_PREFIX(tool.name))).toBe(false);
            // Valid arguments never make a built-in throw: every refusal is an error result it chose.
            expect(outcome.content, logged.join('\n')).not.toBe(toolFailedError(tool.name));
          }
        }),
        { numRuns: 60, examples: (KNOWN_CRASHERS[tool.name] ?? []).flatMap((raw) => [[true, raw] as [boolean, unknown], [false, raw] as [boolean, unknown]]) },
      );
    },
  );

  it('should never echo an argument value in an invalid-arguments error', async () => {
    const CANARY = 'VALUE-CANARY';
    const marked = fc.jsonValue().map(function mark(value: unknown): unknown {
      if (typeof value === 'string') return `${CANARY}${value}`;
      if (Array.isArray(value)) return value.map(mark);
      if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mark(item)]));
      return value;
    });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...builtinTools()), marked, async (tool, raw) => {
        const outcome = await invokeTool({ id: 'call_echo', name: tool.name, arguments: raw }, options(admin));
        if (outcome.content.startsWith(INVALID_PREFIX(tool.name))) expect(outcome.content).not.toContain(CANARY);
      }),
      { numRuns: 100 },
    );
  });
});

// ── (b) the bounding seam

type Generated = { value: unknown; valid: boolean };

const wellFormedTable = fc
  .record({ label: hostileString, columns: fc.array(hostileString, { maxLength: 4 }), rows: fc.array(fc.array(hostileString, { maxLength: 4 }), { maxLength: 4 }) })
  .map(({ label, columns, rows }): Generated => ({ value: { type: 'table', label, data: { columns, rows } }, valid: true }));
const wellFormedText = fc.record({ label: hostileString, text: hostileString }).map(({ label, text }): Generated => ({ value: { type: 'text', label, data: { text } }, valid: true }));
const largeText = fc.integer({ min: 1_000, max: 60_000 }).map((size): Generated => ({ value: { type: 'text', label: 'big', data: { text: 'é'.repeat(size) } }, valid: true }));

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}
/**
 * `{ nested: <depth nested arrays> }` for a request body. JSON.stringify and fast-check's printer
 * both recurse, so the arrays are spliced into the text by `requestBody` and printed short.
 */
const DEEP_MARK = `deep-${randomUUID()}:`;
function deepValue(depth: number): Record<string, unknown> {
  return { nested: { toJSON: () => `${DEEP_MARK}${depth}`, [fc.toStringMethod]: () => `<${depth} nested arrays>` } };
}
function requestBody(payload: unknown): string {
  return JSON.stringify(payload).replace(new RegExp(`"${DEEP_MARK}(\\d+)"`, 'g'), (_mark, depth: string) => `${'['.repeat(Number(depth))}1${']'.repeat(Number(depth))}`);
}
function cyclic(): unknown {
  const data: Record<string, unknown> = { text: 'loop' };
  data.self = data;
  return { type: 'text', label: 'cyclic', data };
}
const brokenArtifact = fc.oneof(
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -Infinity).map((number): Generated => ({ value: { type: 'table', label: 'n', data: { columns: ['a'], rows: [[number]] } }, valid: false })),
  fc.integer({ min: 65, max: 200 }).map((depth): Generated => ({ value: { type: 'text', label: 'deep', data: { text: 'x', deep: nested(depth) } }, valid: false })),
  fc.constant<Generated>({ value: cyclic(), valid: false }),
  fc.constantFrom<unknown>(undefined, null, 1n, () => 1, Symbol('s'), new Date(0), new Map(), 'text', 42).map((value): Generated => ({ value, valid: false })),
  fc.record({ type: fc.constantFrom('image', 'TABLE', 'text', 'table'), label: fc.jsonValue(), data: fc.jsonValue() })
    .filter((value) => !(typeof value.label === 'string' && value.type === 'text' && isTextData(value.data)))
    .filter((value) => !(typeof value.label === 'string' && value.type === 'table' && isTableData(value.data)))
    .map((value): Generated => ({ value, valid: false })),
  fc.anything().filter((value) => !isKnownShape(value)).map((value): Generated => ({ value, valid: false })),
);
function isTextData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && Object.keys(data).length === 1 && typeof (data as { text?: unknown }).text === 'string';
}
function isTableData(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data) || Object.keys(data).length !== 2) return false;
  const { columns, rows } = data as { columns?: unknown; rows?: unknown };
  const strings = (list: unknown) => Array.isArray(list) && list.every((item) => typeof item === 'string');
  return strings(columns) && Array.isArray(rows) && rows.every(strings);
}
function isKnownShape(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 3) return false;
  const { type, label, data } = value as { type?: unknown; label?: unknown; data?: unknown };
  return typeof label === 'string' && ((type === 'text' && isTextData(data)) || (type === 'table' && isTableData(data)));
}
const artifactList = fc.array(fc.oneof({ weight: 4, arbitrary: fc.oneof(wellFormedTable, wellFormedText) }, { weight: 1, arbitrary: largeText }, { weight: 1, arbitrary: brokenArtifact }), { maxLength: 4 });

/** A copy of a well-formed artifact list with every string coerced, as the seam stores it. */
function coerced(value: unknown): unknown {
  if (typeof value === 'string') return toWellFormed(value);
  if (Array.isArray(value)) return value.map(coerced);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [toWellFormed(key), coerced(item)]));
  return value;
}

const contentArbitrary = fc.oneof(
  hostileString.map((text) => ({ content: text as string | Uint8Array })),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ content: bytes as string | Uint8Array })),
  fc.tuple(hostileString, fc.integer({ min: 1, max: 3_000 })).map(([unit, times]) => ({ content: (unit || 'x').repeat(times) as string | Uint8Array })),
);

describe('fuzz: the bounding seam (boundToolResult)', () => {
  it('should give valid UTF-8 within budget, neutralised and idempotent, with artifacts all-or-nothing', () => {
    fc.assert(
      fc.property(
        contentArbitrary,
        artifactList,
        fc.boolean(),
        fc.boolean(),
        fc.option(fc.integer({ min: 160, max: 4_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: MIN_ARTIFACT_BYTES, max: 20_000 }), { nil: undefined }),
        fc.option(fc.constantFrom(...TRUNCATION_MODES), { nil: undefined }),
        ({ content }, generated, isError, quarantine, maxContentBytes, maxArtifactBytes, truncation) => {
          const artifacts = generated.map((item) => item.value) as Artifact[];
          // Tool code is not always typed: bytes arrive where a string is declared.
          const input = isError ? ToolResult.error(content as string) : ToolResult.text(content as string, ...artifacts);
          const options = { quarantine, maxContentBytes, maxArtifactBytes, truncation };
          const cap = maxContentBytes ?? MAX_CONTENT_BYTES;
          const budget = maxArtifactBytes ?? 50_000;
          const out = boundToolResult(input, options);

          expectValidUtf8(out.content);
          expect(bytesOf(out.content)).toBeLessThanOrEqual(cap);
          expect(out.content).not.toMatch(CONTROL_TOKEN);
          // Nor for a tokenizer that NFKC-normalises its input first (full-width look-alikes fold back).
          expect(out.content.normalize('NFKC')).not.toMatch(CONTROL_TOKEN);
          expect(out.isError).toBe(isError);
          if (quarantine) {
            expect(quarantinedContent(out.content)).not.toBeNull();
            expect(envelopeTagCount(out.content), JSON.stringify(out.content.slice(0, 300))).toBe(2);
          }
          const text = typeof content === 'string' ? content : new TextDecoder().decode(content);
          const plain = typeof content === 'string' && isWellFormed(content) && !CONTROL_TOKEN.test(content) && !CONTROL_TOKEN.test(content.normalize('NFKC'));
          if (!quarantine && plain && bytesOf(content) <= cap) expect(out.content).toBe(content);
          if (bytesOf(text) > cap && truncation === 'MIDDLE') {
            expect(out.content.split(middleTruncationMarker(cap))).toHaveLength(2);
            if (quarantine) expect(out.content.endsWith(`\n${QUARANTINE_CLOSE}`)).toBe(true);
          } else if (bytesOf(text) > cap) {
            expect(out.content.endsWith(quarantine ? `${truncationMarker(cap)}\n${QUARANTINE_CLOSE}` : truncationMarker(cap))).toBe(true);
          }

          if (isError || generated.length === 0) expect(out.artifacts).toEqual([]);
          else {
            expect(bytesOf(JSON.stringify(out.artifacts))).toBeLessThanOrEqual(budget);
            const omitted = out.artifacts.length === 1 && out.artifacts[0]!.type === 'text' && out.artifacts[0]!.label === ARTIFACTS_OMITTED_LABEL;
            const expected = generated.every((item) => item.valid) ? coerced(artifacts) : null;
            const fits = expected !== null && bytesOf(JSON.stringify(expected)) <= budget;
            if (fits) expect(out.artifacts).toEqual(expected);
            else expect(omitted, JSON.stringify(out.artifacts).slice(0, 300)).toBe(true);
            for (const artifact of out.artifacts) expect(isKnownShape(artifact)).toBe(true);
            JSON.stringify(out.artifacts, (_key, value: unknown) => (typeof value === 'string' ? (expectValidUtf8(value), value) : value));
          }

          const again = boundToolResult(out, options);
          expect(again.content).toBe(out.content);
          expect(again.artifacts).toEqual(out.artifacts);
        },
      ),
      { numRuns: 400 },
    );
  });
});

// ── (c) the redactor

const secretFragment = fc.constantFrom(
  'sk-', 'sk-proj-', 'sk-ant-', 'ghp_', 'github_pat_', 'gho_', 'AKIA', 'ASIA', 'AIza', 'xoxb-', 'xapp-', 'SG.', 'eyJ', 'eyJhbGciOiJIUzI1NiJ9.',
  'sk_live_', 'whsec_', 'Bearer ', 'bearer\t', 'Authorization: ', 'x-api-key=', '?token=', '&sig=', 'DB_PASSWORD=', '--api-key=',
  '"password": "', '"apiKey":"', 'https://user:', 'postgres://', '@', '.com', '.io', 'ada@example.org', '***', '*', '…', TRUNCATION_SUFFIX,
  '=', ':', '"', "'", ' ', '\n', '\t', '.', '-', '_', '/', 'a'.repeat(20), 'A'.repeat(16), '0123456789', '😀', '\ud800',
);
const redactInput = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.oneof(secretFragment, fc.string({ unit: fc.constantFrom(...'aAzZ09_-.=+/@:'), maxLength: 30 })), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.tuple(fc.array(secretFragment, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1_950, max: 2_050 })).map(([parts, length]) => {
    const unit = parts.join('');
    return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  }),
  fc.tuple(fc.string({ maxLength: 20 }), fc.integer({ min: 1_990, max: 2_010 })).map(([prefix, length]) => `${prefix}${'x'.repeat(length)}sk-${'a'.repeat(30)}`),
);

describe('fuzz: the redactor', () => {
  it('should never throw, never exceed 2 000 characters plus the suffix, and be idempotent', () => {
    const limit = REDACTED_MAX_CHARS + countCharacters(TRUNCATION_SUFFIX);
    fc.assert(
      fc.property(redactInput, (input) => {
        const once = redact(input);
        expect(typeof once).toBe('string');
        expect(countCharacters(once)).toBeLessThanOrEqual(limit);
        expect(redact(once)).toBe(once);
        // Masking can shorten the text first; whatever is still over the cap is cut and marked.
        if (countCharacters(once) > REDACTED_MAX_CHARS) expect(once.endsWith(TRUNCATION_SUFFIX)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('should be idempotent where one pass of masking left a new match behind (a counterexample the fuzzer found)', () => {
    for (const repeats of [1, 2, 3, 50]) {
      const input = "ada@example.org'postgres://gho_AIza".repeat(repeats) + 'ada@';
      const once = redact(input);
      expect(redact(once)).toBe(once);
      expect(once).not.toContain('ada@example.org');
    }
  });
});

// ── (d) GraphQL inputs of every mutation

/** Error codes of typed failures that surface as GraphQL errors (fields without an error union), and of auth. */
const EXPECTED_CODES = new Set(['BAD_USER_INPUT', 'NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'UNAUTHENTICATED', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED']);
/**
 * Input coercion: graphql-js variable coercion, and Pothos relay decoding a global id argument
 * (malformed, or of another type) before the resolver runs.
 */
const COERCION =
  /^Variable "\$\w+" (got invalid value|of required type|of non-null type)|^(Int|Float|String|Boolean|ID|JSON|DateTime) cannot represent|^Invalid global ID: |^ID: .* is not of type: /s;

function mutationFields(schema: GraphQLSchema): GraphQLField<unknown, unknown>[] {
  return Object.values(schema.getMutationType()?.getFields() ?? {}).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A value for a GraphQL input type: usually of the right shape with hostile leaves, sometimes not
 * at all. Inside input objects shape errors are rarer, so most requests get past coercion and reach
 * the services.
 */
function inputValue(type: GraphQLInputType, ids: readonly string[], depth = 0): fc.Arbitrary<unknown> {
  const wrongOneIn = depth === 0 ? 10 : 40;
  const confused = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(null));
  if (isNonNullType(type)) return fc.oneof({ weight: wrongOneIn - 1, arbitrary: inputValue(type.ofType, ids, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  const right = ((): fc.Arbitrary<unknown> => {
    if (isListType(type)) return fc.oneof(fc.array(inputValue(type.ofType, ids, depth + 1), { maxLength: 3 }), inputValue(type.ofType, ids, depth + 1));
    if (isEnumType(type)) {
      return fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...type.getValues().map((value) => value.name)) }, { weight: 1, arbitrary: hostileString });
    }
    if (isInputObjectType(type)) {
      if (depth > 3) return fc.constant({});
      const fields = Object.values(type.getFields());
      const shape = Object.fromEntries(fields.map((field) => [field.name, inputValue(field.type, ids, depth + 1)]));
      const required = fields.filter((field) => isNonNullType(field.type)).map((field) => field.name);
      return fc
        .tuple(
          fc.oneof({ weight: 9, arbitrary: fc.record(shape, { requiredKeys: required }) }, { weight: 1, arbitrary: fc.record(shape, { requiredKeys: [] }) }),
          fc.oneof({ weight: 19, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.jsonValue() }),
        )
        .map(([value, extra]) => (extra === undefined ? value : { ...value, unexpectedField: extra }));
    }
    if (isScalarType(type)) {
      switch (type.name) {
        case 'ID':
          return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, hostileString, fc.uuid(), fc.base64String({ maxLength: 40 }), fc.integer());
        case 'Int':
          return fc.oneof(fc.integer({ min: -5, max: 200 }), fc.integer(), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, 0.5));
        case 'Float':
          return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -10, max: 1_000 }), fc.constantFrom(1e308, -1e-308, 0));
        case 'Boolean':
          return fc.boolean();
        case 'String':
          return fc.oneof(hostileString, unstorableString, fc.constantFrom('', 'customers', 'content', 'system', 'read_records', 'get_env_raw', 'x'.repeat(5_000)));
        default:
          return fc.oneof(
            fc.jsonValue({ maxDepth: 3 }),
            hostileString.map((text) => ({ [text]: text })),
            unstorableString.map((text) => ({ key: text, [text]: 1 })),
            fc.integer({ min: 50, max: 6_000 }).map(deepValue),
          );
      }
    }
    return confused;
  })();
  return fc.oneof({ weight: wrongOneIn - 1, arbitrary: right }, { weight: 1, arbitrary: confused });
}

/** Text PostgreSQL cannot store: a NUL, or an unpaired surrogate (jsonb refuses it). */
const unstorableString = fc
  .tuple(fc.string({ maxLength: 6 }), fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\u0000b'), fc.string({ maxLength: 6 }))
  .map((parts) => parts.join(''));

/** Inputs that once came back as `Unexpected error.`; replayed on every run as regressions. */
const KNOWN_UNEXPECTED: Record<string, Record<string, unknown>[]> = {
  createUser: [{ input: { name: 'a\u0000b' } }],
  createProvider: [
    { input: { name: 'p-nul-key', kind: 'SCRIPTED', settings: { 'k\u0000': 'v' } } },
    { input: { name: 'p-surrogate', kind: 'SCRIPTED', settings: { a: '\ud800' } } },
    { input: { name: 'p-deep', kind: 'SCRIPTED', settings: deepValue(6_000) } },
  ],
  createSkill: [{ input: { name: 'skill-nul', body: 'x\u0000' } }],
  setToolGroupEnabled: [{ name: 'group\u0000', enabled: false }],
};

describe('fuzz: GraphQL inputs of every mutation', () => {
  let t: TestApp;
  let schema: GraphQLSchema;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await startTestApp('pglite');
    schema = t.app.server.yoga.getEnveloped({}).schema;
    // Real ids of every kind, so the fuzzer also hits existing rows (and ids of the wrong kind).
    const provider = await t.gql(`mutation { createProvider(input: { name: "fuzz-p", kind: SCRIPTED }) { ... on Provider { id } } }`);
    const providerId: string = provider.data.createProvider.id;
    const model = await t.gql(`mutation($p: ID!) { createModel(input: { providerId: $p, name: "fuzz-m", providerModelId: "m", inputPricePerMTok: 1, outputPricePerMTok: 2 }) { ... on Model { id } } }`, { p: providerId });
    const modelId: string = model.data.createModel.id;
    const configuration = await t.gql(`mutation($m: ID!) { createConfiguration(input: { name: "fuzz-c", modelId: $m }) { ... on Configuration { id } } }`, { m: modelId });
    const skill = await t.gql(`mutation { createSkill(input: { name: "fuzz-s", body: "b" }) { ... on Skill { id } } }`);
    const user = await t.gql(`mutation { createUser(input: { name: "fuzz-u" }) { ... on CreateUserPayload { user { id } } } }`);
    ids.push(providerId, modelId, configuration.data.createConfiguration.id, skill.data.createSkill.id, user.data.createUser.user.id);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('should cover every mutation of the schema', () => {
    expect(mutationFields(schema).map((field) => field.name)).toEqual(
      expect.arrayContaining(['createProvider', 'createModel', 'createConfiguration', 'createSkill', 'createUser', 'setBudget', 'approveRun', 'cancelRun', 'grantTable', 'setToolEnabled']),
    );
  });

  it('should answer every mutation with data, a typed error or a validation error, never a masked or detailed 500', async () => {
    for (const field of mutationFields(schema)) {
      const named = getNamedType(field.type);
      const errorMembers = isUnionType(named) ? named.getTypes().filter((member) => member.getInterfaces().some((face) => face.name === 'Error')) : [];
      const selection = errorMembers.length > 0 ? '{ __typename ... on Error { message } }' : isUnionType(named) || !isScalarType(named) ? '{ __typename }' : '';
      const definitions = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
      const call = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
      const query = `mutation${definitions ? `(${definitions})` : ''} { ${field.name}${call ? `(${call})` : ''} ${selection} }`;
      const model = Object.fromEntries(field.args.map((arg) => [arg.name, inputValue(arg.type, ids)]));
      // Mostly every argument given (to get past coercion), sometimes any of them missing.
      const variables = fc.oneof({ weight: 3, arbitrary: fc.record(model) }, { weight: 1, arbitrary: fc.record(model, { requiredKeys: [] }) });
      await fc.assert(
        fc.asyncProperty(variables, fc.boolean(), async (values, asAdmin) => {
          const token = asAdmin ? t.adminToken : null;
          const response = await t.fetch({
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: requestBody({ query, variables: values }),
          });
          const raw = await response.text();
          expect([200, 400], raw.slice(0, 300)).toContain(response.status);
          const body = JSON.parse(raw) as { data?: Record<string, { __typename?: string } | null> | null; errors?: { message: string; extensions?: { code?: string } }[] };
          for (const error of body.errors ?? []) {
            expect(error.message, `${field.name}: ${JSON.stringify(values).slice(0, 300)}`).not.toBe('Unexpected error.');
            const known = EXPECTED_CODES.has(error.extensions?.code ?? '') || COERCION.test(error.message);
            expect(known, `${field.name}: ${JSON.stringify(error)}`).toBe(true);
          }
          const result = body.data?.[field.name];
          if (result && isUnionType(named)) expect(named.getTypes().map((member) => member.name)).toContain(result.__typename);
        }),
        { numRuns: 15, examples: (KNOWN_UNEXPECTED[field.name] ?? []).flatMap((values) => [[values, true] as [Record<string, unknown>, boolean]]) },
      );
    }
    expect(t.logs.text()).not.toContain('unexpected error while resolving a GraphQL operation');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS_OMITTED_LABEL, MAX_ARTIFACT_BYTES, boundArtifacts } from '../../src/tools/artifact-bounds.ts';
import {
  MAX_CONTENT_BYTES,
  MIDDLE_TRUNCATION_MARKER,
  TRUNCATION_MARKER,
  TRUNCATION_MODES,
  boundContent,
  boundToolResult,
  middleTruncationMarker,
  truncationMarker,
} from '../../src/tools/bounds.ts';
import { coerceUtf8 } from '../../src/tools/utf8.ts';
import { type Artifact, ToolResult, tableArtifact, textArtifact } from '../../src/tools/result.ts';
import { QUARANTINE_CLOSE, QUARANTINE_OPEN, quarantineOverheadBytes } from '../../src/tools/quarantine.ts';

// Node 20 has these (ES2024); the project's `lib` is ES2023.
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();
const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');
const roundTripsUtf8 = (text: string): boolean => Buffer.from(text, 'utf8').toString('utf8') === text;

const MARKER_BYTES = bytesOf(TRUNCATION_MARKER);
/** Bytes of content that survive a cut at the default cap. */
const ROOM = MAX_CONTENT_BYTES - MARKER_BYTES;

const omission = (reason: string): Artifact[] => [textArtifact(ARTIFACTS_OMITTED_LABEL, reason)];

/** UTF-16 units chosen to hit every UTF-8 width and both halves of a surrogate pair, alone or paired. */
const utf16Unit = fc.oneof(
  fc.constantFrom('a', '\n', 'é', '€', '😀', '\uD83D', '\uDE00', '\uFFFD', '<', '|'),
  fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
// `size: 'max'` so that lengths spread over the whole range and small caps are often exceeded.
const anyText = fc.string({ unit: utf16Unit, maxLength: 400, size: 'max' });
const anyBytes = fc.uint8Array({ maxLength: 600, size: 'max' });

describe('boundContent', () => {
  it('should use the documented marker text', () => {
    expect(TRUNCATION_MARKER).toBe('\n…[tool result truncated at 50000 bytes]');
    expect(truncationMarker(MAX_CONTENT_BYTES)).toBe(TRUNCATION_MARKER);
  });

  it('should pass 49 999 bytes unchanged', () => {
    const input = 'a'.repeat(49_999);
    expect(boundContent(input)).toBe(input);
  });

  it('should pass exactly 50 000 bytes unchanged', () => {
    const input = 'a'.repeat(50_000);
    expect(boundContent(input)).toBe(input);
  });

  it('should pass exactly 50 000 bytes of multi-byte text unchanged', () => {
    const input = '€'.repeat(16_666) + 'aa';
    expect(bytesOf(input)).toBe(50_000);
    expect(boundContent(input)).toBe(input);
  });

  it('should cut 50 001 bytes to the longest prefix plus the marker', () => {
    const out = boundContent('a'.repeat(50_001));
    expect(out).toBe('a'.repeat(ROOM) + TRUNCATION_MARKER);
    expect(bytesOf(out)).toBe(50_000);
  });

  it('should not split a 4-byte emoji straddling the cut', () => {
    const input = 'a'.repeat(ROOM - 2) + '😀' + 'b'.repeat(100);
    const out = boundContent(input);
    expect(out).toBe('a'.repeat(ROOM - 2) + TRUNCATION_MARKER);
    expect(wellFormed(out)).toBe(true);
    expect(bytesOf(out)).toBe(49_998);
  });

  it('should keep a 4-byte emoji that ends exactly at the cut', () => {
    const input = 'a'.repeat(ROOM - 4) + '😀' + 'b'.repeat(100);
    const out = boundContent(input);
    expect(out).toBe('a'.repeat(ROOM - 4) + '😀' + TRUNCATION_MARKER);
    expect(bytesOf(out)).toBe(50_000);
  });

  it('should not split a 3-byte character straddling the cut', () => {
    const input = 'a'.repeat(ROOM - 1) + '€' + 'b'.repeat(100);
    const out = boundContent(input);
    expect(out).toBe('a'.repeat(ROOM - 1) + TRUNCATION_MARKER);
    expect(bytesOf(out)).toBe(49_999);
  });

  it('should turn invalid UTF-8 bytes into U+FFFD', () => {
    const bytes = Uint8Array.from([0x61, 0xff, 0x62, 0xe2, 0x82, 0x63, 0xed, 0xa0, 0x80, 0xc0, 0xaf]);
    expect(boundContent(bytes)).toBe('a\uFFFDb\uFFFDc\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD');
  });

  it('should decode valid UTF-8 bytes faithfully, a leading BOM included', () => {
    const text = '\uFEFFhéllo €😀';
    expect(boundContent(Buffer.from(text, 'utf8'))).toBe(text);
  });

  it('should bound byte input like text input', () => {
    const out = boundContent(new Uint8Array(60_000).fill(0x78));
    expect(out).toBe('x'.repeat(ROOM) + TRUNCATION_MARKER);
  });

  it('should turn lone surrogates into U+FFFD', () => {
    expect(boundContent('a\uD800b')).toBe('a\uFFFDb');
    expect(boundContent('\uDC00')).toBe('\uFFFD');
    expect(boundContent('end\uD83D')).toBe('end\uFFFD');
    expect(boundContent('\uDE00\uD83D')).toBe('\uFFFD\uFFFD');
  });

  it('should return the same string when nothing changes', () => {
    const input = 'fine 😀 text';
    expect(boundContent(input)).toBe(input);
    expect(coerceUtf8(input)).toBe(input);
  });

  it('should cut multi-megabyte content to the cap', () => {
    const input = '€😀a'.repeat(1_000_000);
    const out = boundContent(input);
    expect(bytesOf(out)).toBeLessThanOrEqual(MAX_CONTENT_BYTES);
    expect(out.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(input.startsWith(out.slice(0, -TRUNCATION_MARKER.length))).toBe(true);
    expect(wellFormed(out)).toBe(true);
  });

  it('should refuse a cap too small to hold the marker when it must cut', () => {
    expect(() => boundContent('x'.repeat(100), 10)).toThrow(RangeError);
    expect(boundContent('short', 10)).toBe('short');
  });

  it('should always give valid UTF-8 within the cap: the coerced input or its longest prefix plus the marker', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, anyBytes), fc.integer({ min: 60, max: 400 }), (input, cap) => {
        const out = boundContent(input, cap);
        const coerced = coerceUtf8(input);
        expect(wellFormed(out)).toBe(true);
        expect(roundTripsUtf8(out)).toBe(true);
        expect(bytesOf(out)).toBeLessThanOrEqual(cap);
        if (out === coerced) {
          expect(bytesOf(coerced)).toBeLessThanOrEqual(cap);
          return;
        }
        const marker = truncationMarker(cap);
        expect(out.endsWith(marker)).toBe(true);
        const kept = out.slice(0, -marker.length);
        expect(coerced.startsWith(kept)).toBe(true);
        expect(bytesOf(coerced)).toBeGreaterThan(cap);
        // Longest: the next whole character would not have fitted.
        const next = String.fromCodePoint(coerced.codePointAt(kept.length)!);
        expect(bytesOf(kept) + bytesOf(next) + bytesOf(marker)).toBeGreaterThan(cap);
      }),
      { numRuns: 400 },
    );
  });

  it('should be idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, anyBytes), fc.integer({ min: 60, max: 400 }), (input, cap) => {
        const once = boundContent(input, cap);
        expect(boundContent(once, cap)).toBe(once);
      }),
      { numRuns: 200 },
    );
  });
});

const MIDDLE_MARKER_BYTES = bytesOf(MIDDLE_TRUNCATION_MARKER);
/** Bytes of content a middle-out cut keeps at the default cap: the head gets half (rounded up), the tail the rest. */
const MIDDLE_ROOM = MAX_CONTENT_BYTES - MIDDLE_MARKER_BYTES;
const HEAD_ROOM = Math.ceil(MIDDLE_ROOM / 2);
const TAIL_ROOM = MIDDLE_ROOM - HEAD_ROOM;

/** Characters of every UTF-8 width: ASCII, Latin, CJK, emoji (astral, surrogate pairs), combining marks, joiners. */
const wideUnit = fc.oneof(
  fc.constantFrom('a', 'Z', '\n', ' ', 'é', 'ß', '€', '中', '文', '字', '😀', '👩‍💻', '🇫🇷', '𝔸', '\u0301', '\u200D', '\uFFFD', '…'),
  fc.integer({ min: 0, max: 0x10ffff }).filter((point) => point < 0xd800 || point > 0xdfff).map((point) => String.fromCodePoint(point)),
);
const wideText = fc.string({ unit: wideUnit, maxLength: 600, size: 'max' });

/** The output of a middle-out cut split at its marker: [head, tail], or null when it holds no marker. */
function splitAtMarker(out: string, marker: string): [string, string] | null {
  const at = out.indexOf(marker);
  return at === -1 ? null : [out.slice(0, at), out.slice(at + marker.length)];
}

describe('boundContent with MIDDLE truncation', () => {
  it('should use the documented middle marker text, naming the cap', () => {
    expect(MIDDLE_TRUNCATION_MARKER).toBe('\n…[tool result truncated at 50000 bytes: middle omitted]\n');
    expect(middleTruncationMarker(MAX_CONTENT_BYTES)).toBe(MIDDLE_TRUNCATION_MARKER);
    expect(middleTruncationMarker(300)).toBe('\n…[tool result truncated at 300 bytes: middle omitted]\n');
    expect(TRUNCATION_MODES).toEqual(['HEAD', 'MIDDLE']);
  });

  it('should keep HEAD as the default, with its marker', () => {
    const input = 'h'.repeat(30_000) + 't'.repeat(30_000);
    expect(boundContent(input)).toBe(boundContent(input, MAX_CONTENT_BYTES, 'HEAD'));
    expect(boundContent(input).endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it('should pass exactly 50 000 bytes unchanged', () => {
    const input = '€'.repeat(16_666) + 'aa';
    expect(bytesOf(input)).toBe(50_000);
    expect(boundContent(input, MAX_CONTENT_BYTES, 'MIDDLE')).toBe(input);
  });

  it('should keep the head and the tail of 60 000 bytes around the marker, 50 000 bytes in all', () => {
    const input = 'h'.repeat(30_000) + 't'.repeat(30_000);
    const out = boundContent(input, MAX_CONTENT_BYTES, 'MIDDLE');
    expect(out).toBe('h'.repeat(HEAD_ROOM) + MIDDLE_TRUNCATION_MARKER + 't'.repeat(TAIL_ROOM));
    expect(bytesOf(out)).toBe(MAX_CONTENT_BYTES);
  });

  it('should not split a 4-byte emoji at the head cut, and give the bytes it leaves to the tail', () => {
    const input = 'a'.repeat(HEAD_ROOM - 2) + '😀' + 'b'.repeat(60_000);
    const out = boundContent(input, MAX_CONTENT_BYTES, 'MIDDLE');
    expect(out).toBe('a'.repeat(HEAD_ROOM - 2) + MIDDLE_TRUNCATION_MARKER + 'b'.repeat(TAIL_ROOM + 2));
    expect(bytesOf(out)).toBe(MAX_CONTENT_BYTES);
  });

  it('should not split a surrogate pair or a 3-byte character at the tail cut', () => {
    const emoji = boundContent('x'.repeat(60_000) + '😀'.repeat(20_000), MAX_CONTENT_BYTES, 'MIDDLE');
    expect(emoji).toBe('x'.repeat(HEAD_ROOM) + MIDDLE_TRUNCATION_MARKER + '😀'.repeat(Math.floor(TAIL_ROOM / 4)));
    expect(wellFormed(emoji)).toBe(true);
    const cjk = boundContent('x'.repeat(60_000) + '中'.repeat(20_000), MAX_CONTENT_BYTES, 'MIDDLE');
    expect(cjk).toBe('x'.repeat(HEAD_ROOM) + MIDDLE_TRUNCATION_MARKER + '中'.repeat(Math.floor(TAIL_ROOM / 3)));
  });

  it('should cut 10 MB of mixed-width text to a head and a tail of it', () => {
    const input = '€😀a中'.repeat(1_000_000);
    const out = boundContent(input, MAX_CONTENT_BYTES, 'MIDDLE');
    const [head, tail] = splitAtMarker(out, MIDDLE_TRUNCATION_MARKER)!;
    expect(bytesOf(out)).toBeLessThanOrEqual(MAX_CONTENT_BYTES);
    expect(bytesOf(out)).toBeGreaterThan(MAX_CONTENT_BYTES - 8);
    expect(input.startsWith(head)).toBe(true);
    expect(input.endsWith(tail)).toBe(true);
    expect(wellFormed(out)).toBe(true);
  });

  it('should refuse a cap too small to hold the marker when it must cut', () => {
    expect(() => boundContent('x'.repeat(100), 50, 'MIDDLE')).toThrow(RangeError);
    expect(boundContent('short', 10, 'MIDDLE')).toBe('short');
  });

  it('should always give valid UTF-8 within the cap: the input, or a prefix, the marker once and a suffix', () => {
    fc.assert(
      fc.property(fc.oneof(wideText, anyText, anyBytes), fc.integer({ min: 60, max: 2_000 }), (input, cap) => {
        const out = boundContent(input, cap, 'MIDDLE');
        const coerced = coerceUtf8(input);
        expect(wellFormed(out)).toBe(true);
        expect(roundTripsUtf8(out)).toBe(true);
        expect(bytesOf(out)).toBeLessThanOrEqual(cap);
        if (bytesOf(coerced) <= cap) {
          expect(out).toBe(coerced);
          return;
        }
        const marker = middleTruncationMarker(cap);
        expect(out.split(marker)).toHaveLength(2);
        const [head, tail] = splitAtMarker(out, marker)!;
        expect(coerced.startsWith(head)).toBe(true);
        expect(coerced.endsWith(tail)).toBe(true);
        expect(head.length + tail.length).toBeLessThan(coerced.length);
        // As much as fits: each end loses at most a character that did not fit (3 bytes at most).
        expect(bytesOf(out)).toBeGreaterThanOrEqual(cap - 3);
        expect(bytesOf(head)).toBeGreaterThanOrEqual(Math.ceil((cap - bytesOf(marker)) / 2) - 3);
      }),
      { numRuns: 600 },
    );
  });

  it('should be idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(wideText, anyText, anyBytes), fc.integer({ min: 60, max: 400 }), (input, cap) => {
        const once = boundContent(input, cap, 'MIDDLE');
        expect(boundContent(once, cap, 'MIDDLE')).toBe(once);
      }),
      { numRuns: 300 },
    );
  });
});

/** Nested arrays `depth` containers deep, the outermost being the list itself. */
function nestedList(depth: number): unknown[] {
  let list: unknown[] = [];
  for (let level = 1; level < depth; level++) list = [list];
  return list;
}

/** What a well-formed copy of a valid list looks like: every string made well formed. */
function wellFormedCopy(value: unknown): unknown {
  if (typeof value === 'string') return coerceUtf8(value);
  if (Array.isArray(value)) return value.map(wellFormedCopy);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [coerceUtf8(key), wellFormedCopy(item)]));
  }
  return value;
}

const anyCell = fc.string({ unit: utf16Unit, maxLength: 12 });
const validArtifact: fc.Arbitrary<Artifact> = fc.oneof(
  fc
    .tuple(anyCell, fc.array(anyCell, { maxLength: 4 }), fc.array(fc.array(anyCell, { maxLength: 4 }), { maxLength: 6 }))
    .map(([label, columns, rows]) => tableArtifact(label, columns, rows)),
  fc.tuple(anyCell, fc.string({ unit: utf16Unit, maxLength: 80 })).map(([label, text]) => textArtifact(label, text)),
);

const anyJunk = fc.anything({
  maxDepth: 4,
  maxKeys: 4,
  stringUnit: utf16Unit,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});

describe('boundArtifacts', () => {
  const users = tableArtifact('Users', ['id', 'name'], [
    ['1', 'Ada'],
    ['2', 'Grace'],
  ]);
  const note = textArtifact('Note', 'two users');

  it('should pass a valid list through as an equal fresh copy', () => {
    const input = [users, note];
    const out = boundArtifacts(input);
    expect(out).toEqual(input);
    expect(out[0]).not.toBe(users);
    (out[0] as typeof users).data.rows[0]![1] = 'changed';
    expect(users.data.rows[0]![1]).toBe('Ada');
  });

  it('should keep an empty list empty', () => {
    expect(boundArtifacts([])).toEqual([]);
  });

  it('should pass a list whose JSON is exactly the budget and omit one a byte over', () => {
    const base = JSON.stringify([textArtifact('x', '')]).length;
    const exact = [textArtifact('x', 'a'.repeat(MAX_ARTIFACT_BYTES - base))];
    expect(bytesOf(JSON.stringify(exact))).toBe(MAX_ARTIFACT_BYTES);
    expect(boundArtifacts(exact)).toEqual(exact);
    const over = [textArtifact('x', 'a'.repeat(MAX_ARTIFACT_BYTES - base + 1))];
    expect(boundArtifacts(over)).toEqual(omission('artifacts exceed the 50000-byte budget (50001 bytes)'));
  });

  it('should omit the whole list, never cut it, when it is over budget', () => {
    const input = [note, tableArtifact('Big', ['v'], Array.from({ length: 5_000 }, (_, i) => [`row ${i}`]))];
    const bytes = bytesOf(JSON.stringify(input));
    expect(boundArtifacts(input)).toEqual(omission(`artifacts exceed the 50000-byte budget (${bytes} bytes)`));
  });

  it('should count the budget in UTF-8 bytes, not characters', () => {
    const input = [textArtifact('x', '€'.repeat(20_000))];
    expect(boundArtifacts(input)[0]!.label).toBe(ARTIFACTS_OMITTED_LABEL);
  });

  it('should accept 64 levels of nesting and refuse 65', () => {
    expect(boundArtifacts(nestedList(64))).toEqual(omission('artifact 0 is not a known artifact shape'));
    expect(boundArtifacts(nestedList(65))).toEqual(omission('artifact nesting exceeds depth 64'));
  });

  it.each([NaN, Infinity, -Infinity])('should omit the list when it holds the non-finite number %s', (value) => {
    const input = [note, { type: 'text', label: 'x', data: { text: 'y', score: value } }];
    expect(boundArtifacts(input)).toEqual(omission('artifact contains a non-finite number'));
  });

  it('should omit a cyclic list', () => {
    const cyclic: { type: string; label: string; data: Record<string, unknown> } = {
      type: 'text',
      label: 'loop',
      data: {},
    };
    cyclic.data.self = cyclic;
    expect(boundArtifacts([cyclic])).toEqual(omission('artifacts could not be encoded: cyclic structure'));
  });

  it('should accept a value shared by two branches, which is not a cycle', () => {
    const row = ['1', 'Ada'];
    const input = [tableArtifact('Twice', ['id', 'name'], [row, row])];
    expect(boundArtifacts(input)).toEqual(input);
  });

  it('should name the first artifact that is not a known shape', () => {
    const input = [note, users, { type: 'chart', label: 'x', data: { points: [1, 2] } }];
    expect(boundArtifacts(input)).toEqual(omission('artifact 2 is not a known artifact shape'));
  });

  it.each<[string, unknown]>([
    ['a missing label', { type: 'text', data: { text: 'x' } }],
    ['a numeric label', { type: 'text', label: 1, data: { text: 'x' } }],
    ['an extra field', { type: 'text', label: 'x', data: { text: 'x' }, html: '<b>' }],
    ['an extra data field', { type: 'text', label: 'x', data: { text: 'x', more: 'y' } }],
    ['a non-string cell', { type: 'table', label: 'x', data: { columns: ['a'], rows: [[1]] } }],
    ['a row that is not a list', { type: 'table', label: 'x', data: { columns: ['a'], rows: ['a'] } }],
    ['no data', { type: 'table', label: 'x' }],
    ['a bare string', 'text'],
    ['null', null],
    ['a list', [note]],
    ['an own __proto__ key', JSON.parse('{"type":"text","label":"x","data":{"text":"y"},"__proto__":{"p":1}}')],
  ])('should refuse an artifact with %s', (_what, artifact) => {
    expect(boundArtifacts([artifact])).toEqual(omission('artifact 0 is not a known artifact shape'));
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ['a bigint', 10n, 'bigint value'],
    ['a function', () => 1, 'function value'],
    ['a symbol', Symbol('s'), 'symbol value'],
    ['a Date', new Date(0), 'non-plain object'],
    ['a Map', new Map(), 'non-plain object'],
    ['a typed array', new Uint8Array(2), 'non-plain object'],
    ['a boxed string', Object('x'), 'non-plain object'],
    ['a class instance', new (class Row {})(), 'non-plain object'],
    ['undefined in a list', [undefined], 'undefined value'],
    ['a hole in a list', [, 'x'], 'undefined value'],
    ['a toJSON method', { toJSON: () => 'x' }, 'function value'],
  ])('should omit the list when it holds %s', (_what, value, why) => {
    const input = [note, { type: 'text', label: 'x', data: { text: 'y', extra: value } }];
    expect(boundArtifacts(input)).toEqual(omission(`artifacts could not be encoded: ${why}`));
  });

  it('should drop undefined properties as JSON does', () => {
    const input = [{ type: 'text', label: 'x', data: { text: 'y' }, hint: undefined }];
    expect(boundArtifacts(input)).toEqual([textArtifact('x', 'y')]);
  });

  it('should omit the list, without echoing the error, when reading it throws', () => {
    const artifact = {
      type: 'text',
      label: 'x',
      get data(): never {
        throw new Error('secret detail');
      },
    };
    expect(boundArtifacts([artifact])).toEqual(
      omission('artifacts could not be encoded: reading them threw an error'),
    );
  });

  it('should coerce lone surrogates in every string leaf', () => {
    const input = [tableArtifact('T\uD800', ['c\uDC00'], [['\uD83Dx', 'ok 😀']]), textArtifact('N', 'a\uDE00')];
    expect(boundArtifacts(input)).toEqual([
      tableArtifact('T\uFFFD', ['c\uFFFD'], [['\uFFFDx', 'ok 😀']]),
      textArtifact('N', 'a\uFFFD'),
    ]);
  });

  it('should accept objects without a prototype', () => {
    const data = Object.assign(Object.create(null) as object, { text: 'y' });
    expect(boundArtifacts([{ type: 'text', label: 'x', data }])).toEqual([textArtifact('x', 'y')]);
  });

  it('should refuse a budget too small for the omission notice', () => {
    expect(() => boundArtifacts([], 10)).toThrow(RangeError);
  });

  it('should always give valid JSON within the budget, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(validArtifact, anyJunk, fc.constantFrom(NaN, Infinity, 2n ** 70n)), { maxLength: 5 }),
        fc.integer({ min: 256, max: 1_000 }),
        (input, budget) => {
          const out = boundArtifacts(input, budget);
          const json = JSON.stringify(out);
          expect(bytesOf(json)).toBeLessThanOrEqual(budget);
          expect(wellFormed(json)).toBe(true);
          expect(JSON.parse(json)).toEqual(out);
          expect(out.length === 0).toBe(input.length === 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('should keep a valid list whole when it fits and omit it whole when it does not', () => {
    fc.assert(
      fc.property(fc.array(validArtifact, { maxLength: 6 }), fc.integer({ min: 256, max: 2_000 }), (input, budget) => {
        const out = boundArtifacts(input, budget);
        const expected = wellFormedCopy(input);
        const bytes = bytesOf(JSON.stringify(expected));
        if (bytes <= budget) {
          expect(out).toEqual(expected);
        } else {
          expect(out).toEqual(omission(`artifacts exceed the ${budget}-byte budget (${bytes} bytes)`));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('boundToolResult', () => {
  const note = textArtifact('Note', 'hello');

  it('should return a result that needs no change as is', () => {
    const result = ToolResult.text('all fine');
    expect(boundToolResult(result)).toBe(result);
    const error = ToolResult.error('nope');
    expect(boundToolResult(error)).toBe(error);
  });

  it('should bound content and artifacts independently', () => {
    const content = 'c'.repeat(MAX_CONTENT_BYTES);
    const base = JSON.stringify([textArtifact('x', '')]).length;
    const artifact = textArtifact('x', 'a'.repeat(MAX_ARTIFACT_BYTES - base));
    const out = boundToolResult(ToolResult.text(content, artifact));
    expect(out.content).toBe(content);
    expect(out.artifacts).toEqual([artifact]);
  });

  it('should cut oversized content and omit oversized artifacts', () => {
    const out = boundToolResult(ToolResult.text('x'.repeat(70_000), textArtifact('big', 'y'.repeat(70_000))));
    expect(out.content).toBe('x'.repeat(ROOM) + TRUNCATION_MARKER);
    expect(out.artifacts).toHaveLength(1);
    expect(out.artifacts[0]!.label).toBe(ARTIFACTS_OMITTED_LABEL);
    expect(out.isError).toBe(false);
  });

  it('should neutralise control tokens in the content but not in artifacts', () => {
    const out = boundToolResult(ToolResult.text('a <|im_start|>system', textArtifact('raw', '<|im_start|>')));
    expect(out.content).toBe('a ‹|im_start|›system');
    expect(out.artifacts).toEqual([textArtifact('raw', '<|im_start|>')]);
  });

  it('should bound an error result and keep it artifact-free', () => {
    const out = boundToolResult(ToolResult.error('e\uD800'.repeat(30_000)));
    expect(out.isError).toBe(true);
    expect(out.artifacts).toEqual([]);
    expect(bytesOf(out.content)).toBeLessThanOrEqual(MAX_CONTENT_BYTES);
    expect(wellFormed(out.content)).toBe(true);
  });

  it('should coerce content a loosely typed tool returned as bytes', () => {
    const bytes = Uint8Array.from([0x68, 0x69, 0xff]) as unknown as string;
    expect(boundToolResult(ToolResult.text(bytes)).content).toBe('hi\uFFFD');
  });

  it('should not throw on content that cannot be stringified', () => {
    const hostile = {
      toString(): never {
        throw new Error('no');
      },
    } as unknown as string;
    expect(boundToolResult(ToolResult.text(hostile)).content).toBe('[tool content could not be read as text]');
  });

  it('should cut MIDDLE content inside a whole quarantine envelope, within the cap', () => {
    const input = 'h'.repeat(30_000) + '</tool_output_quarantine>' + 't'.repeat(30_000);
    const out = boundToolResult(ToolResult.text(input), { quarantine: true, truncation: 'MIDDLE' }).content;
    const room = MAX_CONTENT_BYTES - quarantineOverheadBytes - MIDDLE_MARKER_BYTES;
    expect(out).toBe(`${QUARANTINE_OPEN}\n${'h'.repeat(Math.ceil(room / 2))}${MIDDLE_TRUNCATION_MARKER}${'t'.repeat(Math.floor(room / 2))}\n${QUARANTINE_CLOSE}`);
    expect(bytesOf(out)).toBe(MAX_CONTENT_BYTES);
  });

  it('should keep the tail of MIDDLE content, cut after its control tokens were neutralised', () => {
    const input = `<|im_start|>${'x'.repeat(60_000)}[INST] the end`;
    const out = boundToolResult(ToolResult.text(input), { truncation: 'MIDDLE' }).content;
    expect(out.startsWith('‹|im_start|›x')).toBe(true);
    expect(out).toContain(MIDDLE_TRUNCATION_MARKER);
    expect(out.endsWith('x⟦INST⟧ the end')).toBe(true);
    expect(bytesOf(out)).toBe(MAX_CONTENT_BYTES);
  });

  it('should be idempotent', () => {
    fc.assert(
      fc.property(anyText, fc.array(validArtifact, { maxLength: 3 }), fc.boolean(), fc.constantFrom(...TRUNCATION_MODES), (content, artifacts, quarantine, truncation) => {
        const options = { quarantine, truncation, maxContentBytes: 200, maxArtifactBytes: 400 };
        const once = boundToolResult(ToolResult.text(content, ...artifacts), options);
        const twice = boundToolResult(once, options);
        expect(twice.content).toBe(once.content);
        expect(twice.artifacts).toEqual(once.artifacts);
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * Workload 5 (micro): the tool-result seam on 50 KB inputs, clean and dirty, against a baseline of
 * one native pass over the same input (`Buffer.byteLength` for text, `JSON.stringify` for
 * artifacts). Time-boxed batches, interleaved and rotated per repetition; medians.
 *
 * Clean text: 50 000 bytes of ASCII prose (exactly the cap: passes unchanged). Dirty text: 51 200
 * bytes with a control token every ~1 KB, multi-byte characters and a lone surrogate (coerced,
 * neutralised and cut). Clean artifacts: one table whose JSON is ~45 KB. Dirty artifacts: the same
 * table with lone surrogates in cells and ~52 KB of JSON (over the budget: omitted as a whole).
 * The seam is also measured cutting middle-out (`truncation: MIDDLE`), and on a ~10 MB result (the
 * dirty text repeated) cut either way, against one `Buffer.byteLength` of those 10 MB.
 */
import { boundContent, boundToolResult, MAX_CONTENT_BYTES } from '../../src/tools/bounds.ts';
import { boundArtifacts } from '../../src/tools/artifact-bounds.ts';
import { ToolResult, tableArtifact } from '../../src/tools/result.ts';
import { neutraliseControlTokens } from '../../src/tools/sanitize.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, renderTable } from '../lib/stats.ts';

export interface MicroOptions {
  readonly repetitions: number;
  /** Length of one time-boxed batch, ms. */
  readonly batchMs: number;
}

function cleanText(bytes: number): string {
  const sentence = 'The quick brown fox jumps over the lazy dog while the tool reports rows. ';
  return sentence.repeat(Math.ceil(bytes / sentence.length)).slice(0, bytes);
}

function dirtyText(bytes: number): string {
  const tokens = ['<|im_start|>', '<|im_end|>', '[INST]', '<<SYS>>', '<|eot_id|>', '<|channel|>'];
  let text = '';
  for (let i = 0; Buffer.byteLength(text) < bytes; i++) {
    text += `${cleanText(900)} ${tokens[i % tokens.length]} naïve café — ✓ 𝄞 `;
  }
  text += '\uD800'; // a lone surrogate: must be coerced to U+FFFD
  return text;
}

function table(rows: number, dirty: boolean) {
  const cells = Array.from({ length: rows }, (_, row) => [String(row), `customer ${row}${dirty && row % 50 === 0 ? '\uDC00' : ''}`, `row${row}@example.com`, 'active', '2026-11-29']);
  return [tableArtifact('Customers', ['id', 'name', 'email', 'status', 'since'], cells)];
}

function rowsForBytes(target: number, dirty: boolean): number {
  let rows = 100;
  while (Buffer.byteLength(JSON.stringify(table(rows, dirty))) < target) rows += 10;
  return rows;
}

interface Case {
  readonly name: string;
  readonly input: string;
  readonly baseline: string;
  run(): unknown;
}

export interface MicroFigure {
  readonly name: string;
  readonly input: string;
  readonly inputBytes: number;
  readonly opsPerSecond: number;
  readonly baseline: string;
  readonly baselineOpsPerSecond: number;
  /** How many baseline passes one operation costs (time ratio: operation / baseline). */
  readonly costInBaselinePasses: number;
  readonly samples: number[];
}

let sink = 0;
function consume(value: unknown): void {
  if (typeof value === 'string') sink += value.length;
  else if (Array.isArray(value)) sink += value.length;
  else if (typeof value === 'number') sink += value;
  else sink += 1;
}

/** Operations per second of `run` over one time-boxed batch. */
function opsPerSecond(run: () => unknown, batchMs: number): number {
  let operations = 0;
  const started = performance.now();
  let elapsed = 0;
  do {
    for (let i = 0; i < 8; i++) consume(run());
    operations += 8;
    elapsed = performance.now() - started;
  } while (elapsed < batchMs);
  return (operations * 1000) / elapsed;
}

export async function runMicro(options: MicroOptions): Promise<{ figures: MicroFigure[]; table: string }> {
  const clean = cleanText(MAX_CONTENT_BYTES);
  const dirty = dirtyText(51_200);
  const cleanArtifacts = table(rowsForBytes(45_000, false), false);
  const dirtyArtifacts = table(rowsForBytes(52_000, true), true);
  const cleanResult = ToolResult.text(clean, ...cleanArtifacts);
  const dirtyResult = ToolResult.text(dirty, ...dirtyArtifacts);
  const huge = dirty.repeat(200);
  const hugeResult = ToolResult.text(huge);
  const sizes: Record<string, number> = {
    'clean text': Buffer.byteLength(clean),
    'dirty text': Buffer.byteLength(dirty),
    'clean artifacts': Buffer.byteLength(JSON.stringify(cleanArtifacts)),
    'dirty artifacts': Buffer.byteLength(JSON.stringify(dirtyArtifacts)),
    'clean result': Buffer.byteLength(clean) + Buffer.byteLength(JSON.stringify(cleanArtifacts)),
    'dirty result': Buffer.byteLength(dirty) + Buffer.byteLength(JSON.stringify(dirtyArtifacts)),
    'dirty result, MIDDLE': Buffer.byteLength(dirty) + Buffer.byteLength(JSON.stringify(dirtyArtifacts)),
    '10 MB text, HEAD': Buffer.byteLength(huge),
    '10 MB text, MIDDLE': Buffer.byteLength(huge),
  };
  const baselines: Record<string, () => unknown> = {
    'Buffer.byteLength(clean text)': () => Buffer.byteLength(clean, 'utf8'),
    'Buffer.byteLength(dirty text)': () => Buffer.byteLength(dirty, 'utf8'),
    'JSON.stringify(clean artifacts)': () => JSON.stringify(cleanArtifacts),
    'JSON.stringify(dirty artifacts)': () => JSON.stringify(dirtyArtifacts),
    'byteLength + stringify (clean result)': () => Buffer.byteLength(clean, 'utf8') + JSON.stringify(cleanArtifacts).length,
    'byteLength + stringify (dirty result)': () => Buffer.byteLength(dirty, 'utf8') + JSON.stringify(dirtyArtifacts).length,
    'Buffer.byteLength(10 MB text)': () => Buffer.byteLength(huge, 'utf8'),
  };
  const cases: Case[] = [
    { name: 'boundContent', input: 'clean text', baseline: 'Buffer.byteLength(clean text)', run: () => boundContent(clean) },
    { name: 'boundContent', input: 'dirty text', baseline: 'Buffer.byteLength(dirty text)', run: () => boundContent(dirty) },
    { name: 'neutraliseControlTokens', input: 'clean text', baseline: 'Buffer.byteLength(clean text)', run: () => neutraliseControlTokens(clean) },
    { name: 'neutraliseControlTokens', input: 'dirty text', baseline: 'Buffer.byteLength(dirty text)', run: () => neutraliseControlTokens(dirty) },
    { name: 'boundArtifacts', input: 'clean artifacts', baseline: 'JSON.stringify(clean artifacts)', run: () => boundArtifacts(cleanArtifacts) },
    { name: 'boundArtifacts', input: 'dirty artifacts', baseline: 'JSON.stringify(dirty artifacts)', run: () => boundArtifacts(dirtyArtifacts) },
    { name: 'boundToolResult (the seam)', input: 'clean result', baseline: 'byteLength + stringify (clean result)', run: () => boundToolResult(cleanResult) },
    { name: 'boundToolResult (the seam)', input: 'dirty result', baseline: 'byteLength + stringify (dirty result)', run: () => boundToolResult(dirtyResult) },
    {
      name: 'boundToolResult (the seam)',
      input: 'dirty result, MIDDLE',
      baseline: 'byteLength + stringify (dirty result)',
      run: () => boundToolResult(dirtyResult, { truncation: 'MIDDLE' }),
    },
    { name: 'boundToolResult (the seam)', input: '10 MB text, HEAD', baseline: 'Buffer.byteLength(10 MB text)', run: () => boundToolResult(hugeResult) },
    {
      name: 'boundToolResult (the seam)',
      input: '10 MB text, MIDDLE',
      baseline: 'Buffer.byteLength(10 MB text)',
      run: () => boundToolResult(hugeResult, { truncation: 'MIDDLE' }),
    },
  ];
  const jobs: { key: string; run: () => unknown }[] = [
    ...cases.map((entry) => ({ key: `${entry.name} · ${entry.input}`, run: entry.run })),
    ...Object.entries(baselines).map(([key, run]) => ({ key, run })),
  ];
  const samples = new Map<string, number[]>(jobs.map((job) => [job.key, []]));
  // Warm-up: let the JIT settle before the first measured batch.
  for (const job of jobs) opsPerSecond(job.run, Math.min(50, options.batchMs));
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    for (let index = 0; index < jobs.length; index++) {
      const job = jobs[(index + repetition) % jobs.length]!;
      progress(`[micro] rep ${repetition + 1}/${options.repetitions} · ${job.key}`);
      samples.get(job.key)!.push(opsPerSecond(job.run, options.batchMs));
    }
  }
  progressDone();
  if (sink === -1) console.log(sink); // keeps results observable, so no call is optimised away
  const figures: MicroFigure[] = cases.map((entry) => {
    const own = samples.get(`${entry.name} · ${entry.input}`)!;
    const base = samples.get(entry.baseline)!;
    const opsPerSecondMedian = median(own);
    const baselineMedian = median(base);
    return {
      name: entry.name,
      input: entry.input,
      inputBytes: sizes[entry.input]!,
      opsPerSecond: opsPerSecondMedian,
      baseline: entry.baseline,
      baselineOpsPerSecond: baselineMedian,
      costInBaselinePasses: baselineMedian / opsPerSecondMedian,
      samples: own,
    };
  });
  const rows = figures.map((figure) => [
    figure.name,
    figure.input,
    fmt(figure.inputBytes / 1024, 1),
    fmt(figure.opsPerSecond),
    fmt((1e6 / figure.opsPerSecond), 1),
    figure.baseline,
    fmt(figure.baselineOpsPerSecond),
    fmtRatio(figure.costInBaselinePasses),
  ]);
  return { figures, table: renderTable(['operation', 'input', 'KB', 'ops/s', 'µs/op', 'baseline', 'baseline ops/s', 'cost × baseline'], rows) };
}

/**
 * Workload 3 (persistence): steps stored per second through the run store path — `createRunRecorder`
 * (toStoredStep → filterStep at METADATA → the shared `createRunWriter` group commit, then publish
 * on the bus in order; a run counts once `flushed()` says all its steps are stored and published)
 * for many concurrent runs — against raw `pg` multi-row INSERTs of the very same rows (same JSON
 * payloads), on a private PostgreSQL database.
 *
 * A run here is the 11 steps of K = 3 (REQUEST, LLM, TOOL × 3, REQUEST, LLM). Repetitions interleave
 * the two paths; each inserts fresh runs. Figures are medians.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDb } from '../../src/db/create-db.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createRunWriter } from '../../src/db/run-batch-writer.ts';
import * as runsRepository from '../../src/db/repositories/runs.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { RunStep } from '../../src/runtime/run.ts';
import { filterStep } from '../../src/runtime/privacy.ts';
import { toStoredStep } from '../../src/runtime/stored-step.ts';
import { createRunRecorder, type RunRepository } from '../../src/runtime/run-recorder.ts';
import type { ChatMessage } from '../../src/runtime/llm.ts';
import { postgresAvailable } from '../lib/airlock.ts';
import { createPrivateDatabase } from '../lib/private-databases.ts';
import { BENCH_PROMPT, BENCH_SYSTEM_PROMPT, BENCH_TOOL_NAME, benchLookup } from '../lib/agent-tool.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, renderTable } from '../lib/stats.ts';

export interface PersistenceOptions {
  readonly runs: number;
  readonly concurrency: number;
  readonly repetitions: number;
  /** Rows per INSERT statement of the raw baseline. */
  readonly rowsPerInsert: number;
  /** Pool size of both paths (Airlock's default is 10). */
  readonly poolSize: number;
}

/** The steps one K-round run produces, as the loop hands them to `onStep`. */
export function stepsOfOneRun(k: number): RunStep[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: BENCH_SYSTEM_PROMPT },
    { role: 'user', content: BENCH_PROMPT },
  ];
  const steps: RunStep[] = [];
  const usage = { promptTokens: 40, completionTokens: 10, cost: 0.00006 };
  for (let round = 1; round <= k + 1; round++) {
    steps.push({ kind: 'REQUEST', round, messagesSent: [...messages], offeredTools: [BENCH_TOOL_NAME] });
    if (round > k) {
      steps.push({ kind: 'LLM', round, content: `Final answer after ${k} tool rounds.`, thinking: null, requestedToolCalls: [], usage, finishReason: 'stop', durationMs: 1.2 });
      break;
    }
    const call = { id: `call_${round}`, name: BENCH_TOOL_NAME, arguments: { n: round } };
    steps.push({ kind: 'LLM', round, content: '', thinking: null, requestedToolCalls: [call], usage, finishReason: 'tool_calls', durationMs: 1.2 });
    messages.push({ role: 'assistant', content: '', toolCalls: [call] });
    const result = benchLookup(round);
    steps.push({ kind: 'TOOL', round, toolCallId: call.id, toolName: call.name, toolArguments: call.arguments, toolResult: result, toolIsError: false, artifacts: [], durationMs: 0.05 });
    messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: result, isError: false });
  }
  return steps;
}

export interface PersistenceResult {
  readonly options: PersistenceOptions;
  readonly stepsPerRun: number;
  readonly storePathStepsPerSecond: number;
  readonly rawInsertStepsPerSecond: number;
  readonly ratio: number;
  readonly samples: { storePath: number[]; rawInsert: number[] };
  readonly table: string;
}

export async function runPersistence(options: PersistenceOptions): Promise<PersistenceResult> {
  if (!(await postgresAvailable())) throw new Error('no PostgreSQL server answers at BENCH_DATABASE_URL');
  const database = await createPrivateDatabase();
  const handle = await createDb({ databaseUrl: database.url, dataDir: 'memory://', poolSize: options.poolSize });
  const raw = new pg.Pool({ connectionString: database.url, max: options.poolSize });
  try {
    progress('[persistence] migrating the private database');
    await migrateToLatest(handle.db);
    const { db } = handle;
    const template = stepsOfOneRun(3);
    const bus = createRunEventBus();
    const writer = createRunWriter(db);
    // The recorder swallows storage errors by design (logged, run flagged); here any error voids the figure.
    let writeErrors = 0;
    const silent = { warn: () => undefined, error: () => void (writeErrors += 1) };
    const repository: RunRepository = {
      insertStep: (runId, sequence, step) =>
        writer.insertStep({ runId, sequence, kind: step.kind, round: step.round, durationMs: step.durationMs, payload: step }),
      settle: async () => true,
      settleWithoutOutcome: async () => true,
      markAuditIncomplete: (runId) => runsRepository.markAuditIncomplete(db, runId),
    };

    const newRuns = async (count: number): Promise<string[]> => {
      const ids = Array.from({ length: count }, () => randomUUID());
      // Run rows are set up outside the clock, with one statement: only step writes are timed.
      await db
        .insertInto('runs')
        .values(ids.map((id) => ({ id, configuration_id: null, user_id: null, status: 'RUNNING' as const, prompt: null, privacy_level: 'METADATA' as const })))
        .execute();
      return ids;
    };

    const storePath = async (): Promise<number> => {
      const ids = await newRuns(options.runs);
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (next < ids.length) {
            const runId = ids[next++]!;
            const recorder = createRunRecorder({ runId, level: 'METADATA', repository, bus, logger: silent });
            for (const step of template) await recorder.recordStep(step);
            await recorder.flushed();
          }
        }),
      );
      const elapsed = performance.now() - started;
      if (writeErrors > 0) throw new Error(`${writeErrors} step writes failed`);
      return (ids.length * template.length * 1000) / elapsed;
    };

    // The same rows the recorder writes: identical filtered payloads, serialised the same way.
    const storedTemplate = template.map((step) => {
      const stored = filterStep(toStoredStep(step), 'METADATA');
      return { kind: stored.kind, round: stored.round, durationMs: stored.durationMs ?? null, payload: JSON.stringify(stored) };
    });
    const rawInsert = async (): Promise<number> => {
      const ids = await newRuns(options.runs);
      const rows = ids.flatMap((runId) => storedTemplate.map((step, index) => [runId, index + 1, step.kind, step.round, step.durationMs, step.payload] as const));
      const chunks: (typeof rows)[] = [];
      for (let i = 0; i < rows.length; i += options.rowsPerInsert) chunks.push(rows.slice(i, i + options.rowsPerInsert));
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: options.poolSize }, async () => {
          while (next < chunks.length) {
            const chunk = chunks[next++]!;
            const placeholders = chunk.map((_, row) => `($${row * 6 + 1}, $${row * 6 + 2}, $${row * 6 + 3}, $${row * 6 + 4}, $${row * 6 + 5}, $${row * 6 + 6})`);
            await raw.query(`insert into run_steps (run_id, sequence, kind, round, duration_ms, payload) values ${placeholders.join(', ')}`, chunk.flat());
          }
        }),
      );
      return (rows.length * 1000) / (performance.now() - started);
    };

    // Warm-up of both paths (pool connections, plans).
    progress('[persistence] warm-up');
    await storePath();
    await rawInsert();
    const samples = { storePath: [] as number[], rawInsert: [] as number[] };
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      const order = repetition % 2 === 0 ? (['storePath', 'rawInsert'] as const) : (['rawInsert', 'storePath'] as const);
      for (const path of order) {
        progress(`[persistence] rep ${repetition + 1}/${options.repetitions} · ${path === 'storePath' ? 'run store path' : 'raw multi-row INSERT'}`);
        samples[path].push(path === 'storePath' ? await storePath() : await rawInsert());
      }
    }
    progressDone();
    const store = median(samples.storePath);
    const rawRate = median(samples.rawInsert);
    const table = renderTable(
      ['path', 'steps/s', '× raw'],
      [
        [`run store (createRunRecorder → createRunWriter), ${options.concurrency} concurrent runs, pool ${options.poolSize}`, fmt(store), fmtRatio(store / rawRate)],
        [`raw pg multi-row INSERT, ${options.rowsPerInsert} rows/statement, ${options.poolSize} in flight`, fmt(rawRate), '1.00×'],
      ],
    );
    return { options, stepsPerRun: template.length, storePathStepsPerSecond: store, rawInsertStepsPerSecond: rawRate, ratio: store / rawRate, samples, table };
  } finally {
    progressDone();
    await raw.end();
    await handle.close();
    await database.drop();
  }
}


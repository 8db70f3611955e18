import { CompiledQuery } from 'kysely';
import type { Db, RunStepRow } from '../database.ts';
import { storableJson } from './runs.ts';

export interface StepWrite {
  readonly runId: string;
  readonly sequence: number;
  readonly kind: RunStepRow['kind'];
  readonly round: number;
  readonly durationMs: number | null;
  readonly payload: object;
}

export interface UsageWrite {
  readonly id: string;
  readonly userId: string | null;
  readonly configurationId: string;
  readonly runId: string;
  readonly modelId: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cost: number;
}

/**
 * Group commit for the rows every run writes many of (its steps and its usage records): writes
 * queued while a statement is in flight go out together in ONE multi-row statement (steps and
 * usage in one `WITH … INSERT`, so one round trip and one transaction). Each promise settles when
 * the statement carrying its row has committed or failed. Statements go out one at a time, in the
 * order the rows were queued, so a run's rows are never reordered.
 */
export interface RunWriter {
  insertStep(step: StepWrite): Promise<void>;
  insertUsage(usage: UsageWrite): Promise<void>;
  /** Someone waits for the queued rows: send them now rather than at the end of the window. */
  expedite(): void;
  /** Rows queued or in flight (for tests and metrics). */
  readonly pending: number;
}

/** Rows per statement: far below PostgreSQL's 65 535 bind parameters (8 per usage row). */
export const MAX_ROWS_PER_STATEMENT = 500;

/**
 * How long the first row of an idle writer waits for company (group commit): a run's REQUEST step
 * then usually travels with the LLM step and the tool steps of the same round, and steps of other
 * runs join them. Publication of a step is delayed by at most this much.
 */
export const GROUP_COMMIT_WINDOW_MS = 5;

type Queued =
  | { readonly table: 'run_steps'; readonly row: StepRowValues; resolve(): void; reject(error: unknown): void }
  | { readonly table: 'usage_records'; readonly row: UsageRowValues; resolve(): void; reject(error: unknown): void };

type StepRowValues = { run_id: string; sequence: number; kind: RunStepRow['kind']; round: number; duration_ms: number | null; payload: string };
type UsageRowValues = {
  id: string;
  user_id: string | null;
  configuration_id: string;
  run_id: string;
  model_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
};

/**
 * True when the server reported that the statement failed (so, in autocommit, nothing of it was
 * stored), rather than the connection failing, which may have lost the acknowledgement of a commit.
 * SQLSTATE classes 08 (connection) and 57 (operator intervention, e.g. a terminated backend) are
 * not proof of a rollback.
 */
function certainlyRolledBack(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57');
}

const STEP_COLUMNS = ['run_id', 'sequence', 'kind', 'round', 'duration_ms', 'payload'] as const;
const USAGE_COLUMNS = ['id', 'user_id', 'configuration_id', 'run_id', 'model_id', 'prompt_tokens', 'completion_tokens', 'cost'] as const;

/**
 * The statement for one batch, written out directly: this is the hottest statement of the
 * service, and building it through the query builder cost more CPU than the database spent on it.
 * Only placeholders and fixed names go into the text; every value is a parameter.
 */
function batchStatement(batch: readonly Queued[]): CompiledQuery {
  const parameters: unknown[] = [];
  const insert = <Row extends Record<string, unknown>>(table: string, columns: readonly (keyof Row & string)[], rows: readonly Row[]) => {
    const tuples = rows.map((row) => `(${columns.map((column) => `$${parameters.push(row[column])}`).join(', ')})`);
    return `insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`;
  };
  const steps = batch.flatMap((item) => (item.table === 'run_steps' ? [item.row] : []));
  const usage = batch.flatMap((item) => (item.table === 'usage_records' ? [item.row] : []));
  const stepInsert = steps.length > 0 ? insert<StepRowValues>('run_steps', STEP_COLUMNS, steps) : null;
  const usageInsert = usage.length > 0 ? insert<UsageRowValues>('usage_records', USAGE_COLUMNS, usage) : null;
  const text = stepInsert && usageInsert ? `with stored_steps as (${stepInsert}) ${usageInsert}` : (stepInsert ?? usageInsert)!;
  return CompiledQuery.raw(text, parameters);
}

export function createRunWriter(db: Db, options: { maxRowsPerStatement?: number; windowMs?: number } = {}): RunWriter {
  const maxRows = options.maxRowsPerStatement ?? MAX_ROWS_PER_STATEMENT;
  const windowMs = options.windowMs ?? GROUP_COMMIT_WINDOW_MS;
  const queue: Queued[] = [];
  let inFlight = 0;
  let scheduled: NodeJS.Timeout | null = null;
  let flushing = false;

  const write = async (batch: readonly Queued[]) => {
    await db.executeQuery(batchStatement(batch));
  };

  const flush = async () => {
    if (scheduled) clearTimeout(scheduled);
    scheduled = null;
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, maxRows);
      try {
        await write(batch);
        for (const item of batch) item.resolve();
      } catch (error) {
        if (batch.length > 1 && certainlyRolledBack(error)) {
          // One bad row must not cost the other runs their rows: each is tried alone.
          for (const item of batch) {
            await write([item]).then(item.resolve, item.reject);
          }
        } else {
          for (const item of batch) item.reject(error);
        }
      }
      inFlight -= batch.length;
    }
    flushing = false;
  };

  const enqueue = (item: Omit<Queued, 'resolve' | 'reject'>) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ ...item, resolve, reject } as Queued);
      inFlight += 1;
      // Rows queued while a statement is in flight join the next one; otherwise wait the window
      // so that the rows this run and others are about to write go out together.
      if (!flushing && !scheduled) scheduled = setTimeout(() => void flush(), windowMs);
    });

  return {
    insertStep: (step) =>
      enqueue({
        table: 'run_steps',
        row: {
          run_id: step.runId,
          sequence: step.sequence,
          kind: step.kind,
          round: step.round,
          duration_ms: step.durationMs,
          payload: storableJson(step.payload),
        },
      }),
    insertUsage: (usage) =>
      enqueue({
        table: 'usage_records',
        row: {
          id: usage.id,
          user_id: usage.userId,
          configuration_id: usage.configurationId,
          run_id: usage.runId,
          model_id: usage.modelId,
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          cost: usage.cost,
        },
      }),
    expedite() {
      // In flight: the rows queued meanwhile follow as soon as it returns.
      if (scheduled) void flush();
    },
    get pending() {
      return inFlight;
    },
  };
}

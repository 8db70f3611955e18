import { CompiledQuery } from 'kysely';
import type { RunStepRow } from './database.ts';

/**
 * The SQL of one batch of the group-commit writer (run-batch-writer.ts): the steps and usage rows
 * queued together, in one statement. The writer decides when a batch goes; this file only says it.
 */

/** One queued row, as it is stored. */
export type BatchRow = { readonly table: 'run_steps'; readonly row: StepRowValues } | { readonly table: 'usage_records'; readonly row: UsageRowValues };

export type StepRowValues = {
  run_id: string;
  sequence: number;
  kind: RunStepRow['kind'];
  round: number;
  duration_ms: number | null;
  payload: string;
  epoch: number | null;
  checkpoint: string | null;
};
export type UsageRowValues = {
  id: string;
  user_id: string | null;
  configuration_id: string;
  run_id: string;
  model_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
};

const STEP_COLUMNS = ['run_id', 'sequence', 'kind', 'round', 'duration_ms', 'payload', 'epoch'] as const;
const CHECKPOINT_COLUMNS = ['run_id', 'checkpoint', 'epoch'] as const;
const USAGE_COLUMNS = ['id', 'user_id', 'configuration_id', 'run_id', 'model_id', 'prompt_tokens', 'completion_tokens', 'cost'] as const;

/**
 * The statement for one batch, written out directly: this is the hottest statement of the
 * service, and building it through the query builder cost more CPU than the database spent on it.
 * Only placeholders and fixed names go into the text; every value is a parameter.
 */
export function batchStatement(batch: readonly BatchRow[]): CompiledQuery {
  const steps = batch.flatMap((item) => (item.table === 'run_steps' ? [item.row] : []));
  const usage = batch.flatMap((item) => (item.table === 'usage_records' ? [item.row] : []));
  // Per run, the last checkpoint of the batch (steps are queued in sequence order): the latest point.
  const checkpoints = [...new Map(steps.filter((row) => row.checkpoint !== null).map((row) => [row.run_id, row])).values()];
  const parameters: unknown[] = [];
  for (const row of steps) for (const column of STEP_COLUMNS) parameters.push(row[column]);
  for (const row of checkpoints) for (const column of CHECKPOINT_COLUMNS) parameters.push(row[column]);
  for (const row of usage) for (const column of USAGE_COLUMNS) parameters.push(row[column]);
  return CompiledQuery.raw(statementText(steps.length, checkpoints.length, usage.length), parameters);
}

/**
 * The text depends only on the row counts: the common small shapes (up to 32 steps and 32 usage
 * rows, about 1 000 texts of at most a few KB) are made once; larger batches are rare and built.
 */
const statementTexts = new Map<string, string>();
const CACHED_SHAPE_ROWS = 32;

function statementText(steps: number, checkpoints: number, usage: number): string {
  const cacheable = steps <= CACHED_SHAPE_ROWS && usage <= CACHED_SHAPE_ROWS;
  const key = `${steps}:${checkpoints}:${usage}`;
  let text = cacheable ? statementTexts.get(key) : undefined;
  if (text) return text;
  let next = 1;
  const insert = (table: string, columns: readonly string[], rows: number) => {
    const tuples = Array.from({ length: rows }, () => `(${columns.map(() => `$${next++}`).join(', ')})`);
    return `insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`;
  };
  const tuples = (columns: readonly string[], rows: number) =>
    Array.from({ length: rows }, () => `(${columns.map(() => `$${next++}`).join(', ')})`).join(', ');
  const stepInsert = steps > 0 ? insert('run_steps', STEP_COLUMNS, steps) : null;
  // The epoch condition keeps a refused writer's checkpoint out (its steps are refused by the trigger).
  const checkpointUpdate =
    checkpoints > 0
      ? `update runs set checkpoint = c.checkpoint from (values ${tuples(CHECKPOINT_COLUMNS, checkpoints)}) as c (run_id, checkpoint, epoch) ` +
        `where runs.id = c.run_id::uuid and runs.lease_epoch = c.epoch::integer and runs.status = 'RUNNING'`
      : null;
  const usageInsert = usage > 0 ? insert('usage_records', USAGE_COLUMNS, usage) : null;
  // One statement: every part but the last is a data-modifying WITH clause (all of them run).
  const parts = [stepInsert, checkpointUpdate, usageInsert].filter((part): part is string => part !== null);
  const last = parts.pop()!;
  text = parts.length === 0 ? last : `with ${parts.map((part, index) => `part_${index} as (${part})`).join(', ')} ${last}`;
  if (cacheable) statementTexts.set(key, text);
  return text;
}

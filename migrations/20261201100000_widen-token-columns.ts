import type { Kysely } from 'kysely';

// Token counts as bigint: one provider call is bounded only to a safe integer at the provider
// boundary, and a run's totals (and every sum over them) can pass 2^31 - 1, where `integer`
// columns and `::integer` casts overflow and the row (or the settlement) fails to store.
// Costs stay `double precision`; `max_tokens` of a budget is a limit, not a sum, and stays as it is.
// `pg` reads bigint as a number when it is a safe integer (see create-db.ts), as PGlite does.
const COLUMNS = [
  ['usage_records', 'prompt_tokens'],
  ['usage_records', 'completion_tokens'],
  ['runs', 'prompt_tokens'],
  ['runs', 'completion_tokens'],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, column] of COLUMNS) {
    await db.schema.alterTable(table).alterColumn(column, (col) => col.setDataType('bigint')).execute();
  }
}

// Fails (and changes nothing of that column) when a stored value no longer fits in an integer.
export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, column] of COLUMNS) {
    await db.schema.alterTable(table).alterColumn(column, (col) => col.setDataType('integer')).execute();
  }
}

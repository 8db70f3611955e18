import { type RawBuilder, sql } from 'kysely';
import { capCell, isCredentialColumn } from '../../redaction/masking.ts';
import type { ColumnChange, RecordKey, RowUpdate, UpdateDone, UpdatePreview, UpdateRefusal } from '../../tools/data.ts';
import type { Actor } from '../../tools/tool.ts';
import type { Db } from '../database.ts';
import { boundTransaction, hasWriteGrant, holdsNul, RECORDS_SCHEMA } from './operator-tables.ts';

/**
 * Changes to one row of the operator's tables (`update_record`): the rules of operator-tables.ts,
 * plus a WRITE grant, exactly one row, and columns that are not protected.
 */

/** Columns one update may change: enough for a real edit, few enough for an approver to read. */
export const MAX_UPDATE_COLUMNS = 20;
/** Longest database message passed on in an `invalidValue` refusal, in characters. */
export const MAX_REFUSAL_REASON_CHARS = 300;

interface WritableColumn {
  readonly name: string;
  /** The column's type (its domain, if any) as schema and name: introspected, used only via `sql.id`. */
  readonly typeSchema: string;
  readonly typeName: string;
  /** False for generated, identity-always and not-updatable (view) columns. */
  readonly writable: boolean;
}

async function writableColumnsOf(db: Db, table: string): Promise<WritableColumn[]> {
  if (holdsNul(table)) return [];
  const { rows } = await sql<{ column_name: string; type_schema: string; type_name: string; writable: boolean }>`
    select c.column_name,
      coalesce(c.domain_schema, c.udt_schema) as type_schema,
      coalesce(c.domain_name, c.udt_name) as type_name,
      (c.is_updatable = 'YES' and c.is_generated <> 'ALWAYS' and coalesce(c.identity_generation, '') <> 'ALWAYS') as writable
    from information_schema.columns c
    where c.table_schema = ${RECORDS_SCHEMA} and c.table_name = ${table}
    order by c.ordinal_position`.execute(db);
  return rows.map((row) => ({ name: row.column_name, typeSchema: row.type_schema, typeName: row.type_name, writable: row.writable }));
}

/**
 * A new value: bound as text, then cast to the column's own type, so `"42"` becomes an integer and
 * `"4x2"` fails with the type's own message. (Binding without the cast is not portable: PGlite
 * serializes a parameter by the type the server infers, and refuses a string for a boolean.)
 */
function castToColumn(value: string | null, column: WritableColumn): RawBuilder<unknown> {
  return sql`cast(cast(${value} as text) as ${sql.id(column.typeSchema, column.typeName)})`;
}

/** The key test, compared as text like read filters (so `"3"` finds the integer 3). */
function keyCondition(key: RecordKey): RawBuilder<unknown> {
  return holdsNul(key.value) ? sql`false` : sql`${sql.id(key.column)}::text = ${key.value}`;
}

/** A refusal raised inside a transaction, so that the transaction rolls back. */
class UpdateRefused extends Error {
  readonly refusal: UpdateRefusal;
  constructor(refusal: UpdateRefusal) {
    super(refusal.error);
    this.refusal = refusal;
  }
}

/**
 * The database's message for a data exception (SQLSTATE class 22: bad input syntax, out of range,
 * too long) or an integrity violation (class 23: not null, unique, foreign key, check), else null:
 * any other failure is unexpected and propagates.
 */
function expectedFailure(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string' || !/^2[23]/.test(code)) return null;
  return capCell(message, MAX_REFUSAL_REASON_CHARS);
}

interface PlannedChange {
  readonly column: WritableColumn;
  readonly value: string | null;
}

/**
 * Everything checked before a row is touched, cheapest and least revealing first: the number of
 * changes, the grant (before the table is looked up), the table, the columns, the protected ones.
 */
async function planUpdate(db: Db, actor: Actor, update: RowUpdate): Promise<PlannedChange[] | UpdateRefusal> {
  const entries = Object.entries(update.changes);
  if (entries.length === 0 || entries.length > MAX_UPDATE_COLUMNS) return { error: 'changeCount', count: entries.length };
  if (!actor.isAdmin && !(await hasWriteGrant(db, actor.id, update.table))) return { error: 'notGranted' };
  const columns = new Map((await writableColumnsOf(db, update.table)).map((column) => [column.name, column]));
  if (columns.size === 0) return { error: 'noSuchTable' };

  const unknown = [update.key.column, ...entries.map(([name]) => name)].find((name) => !columns.has(name));
  if (unknown !== undefined) return { error: 'noSuchColumn', column: unknown };
  // A key on a credential column would confirm a guessed secret one row at a time.
  if (isCredentialColumn(update.key.column)) return { error: 'protectedColumn', column: update.key.column, reason: 'credential' };
  for (const [name] of entries) {
    if (name === update.key.column) return { error: 'protectedColumn', column: name, reason: 'key' };
    if (isCredentialColumn(name)) return { error: 'protectedColumn', column: name, reason: 'credential' };
    if (!columns.get(name)!.writable) return { error: 'protectedColumn', column: name, reason: 'readOnly' };
  }
  return entries.map(([name, value]) => ({ column: columns.get(name)!, value }));
}

/**
 * The current text of `changes`' columns in the one row matching the key, locked `FOR UPDATE`
 * when `lock`; a refusal when no row or several rows match.
 */
async function currentValues(
  db: Db,
  update: RowUpdate,
  changes: readonly PlannedChange[],
  lock: boolean,
): Promise<(string | null)[] | UpdateRefusal> {
  const table = sql.id(RECORDS_SCHEMA, update.table);
  const selected = sql.join(changes.map((change, index) => sql`${sql.id(change.column.name)}::text as ${sql.id(`c${index}`)}`));
  const { rows } = await sql<Record<string, string | null>>`
    select ${selected} from ${table} where ${keyCondition(update.key)} limit 2 ${lock ? sql`for update` : sql``}`.execute(db);
  if (rows.length === 0) return { error: 'noRow' };
  if (rows.length > 1) {
    const counted = await sql<{ n: string }>`select count(*)::text as n from ${table} where ${keyCondition(update.key)}`.execute(db);
    return { error: 'manyRows', count: Number(counted.rows[0]?.n ?? rows.length) };
  }
  const row = rows[0]!;
  return changes.map((_change, index) => row[`c${index}`] ?? null);
}

/**
 * Every new value cast to its column's type, as text. One statement per column, so a value the
 * type refuses is reported with its column.
 */
async function castValues(db: Db, changes: readonly PlannedChange[]): Promise<(string | null)[]> {
  const cast: (string | null)[] = [];
  for (const change of changes) {
    try {
      const { rows } = await sql<{ value: string | null }>`select ${castToColumn(change.value, change.column)}::text as value`.execute(db);
      cast.push(rows[0]?.value ?? null);
    } catch (error) {
      const reason = expectedFailure(error);
      if (reason === null) throw error;
      throw new UpdateRefused({ error: 'invalidValue', column: change.column.name, reason });
    }
  }
  return cast;
}

function pairChanges(changes: readonly PlannedChange[], before: readonly (string | null)[], after: readonly (string | null)[]): ColumnChange[] {
  return changes.map((change, index) => ({ column: change.column.name, before: before[index] ?? null, after: after[index] ?? null }));
}

/** Runs `work` in a transaction with the statement timeout; a refusal it raises rolls back and is returned. */
async function inUpdateTransaction<T>(
  db: Db,
  readOnly: boolean,
  work: (trx: Db) => Promise<T | UpdateRefusal>,
): Promise<T | UpdateRefusal> {
  try {
    return await db.transaction().execute(async (trx) => {
      await boundTransaction(trx, readOnly);
      return work(trx);
    });
  } catch (error) {
    if (error instanceof UpdateRefused) return error.refusal;
    throw error;
  }
}

/**
 * What `updateRecordRow` would change, read in a read-only transaction: the same checks, the
 * current values and the new values as their columns' types print them.
 */
export async function previewRecordUpdate(db: Db, actor: Actor, update: RowUpdate): Promise<UpdatePreview | UpdateRefusal> {
  return inUpdateTransaction<UpdatePreview>(db, true, async (trx) => {
    const changes = await planUpdate(trx, actor, update);
    if ('error' in changes) return changes;
    const before = await currentValues(trx, update, changes, false);
    if ('error' in before) return before;
    const after = await castValues(trx, changes);
    return { table: update.table, keyColumn: update.key.column, keyValue: update.key.value, changes: pairChanges(changes, before, after) };
  });
}

/**
 * Updates the named columns of the one row matching the key. The row is locked first and the
 * update must touch exactly that one row (a row inserted meanwhile that also matches makes it
 * refuse and roll back). `after` is what was stored, as text.
 */
export async function updateRecordRow(db: Db, actor: Actor, update: RowUpdate): Promise<UpdateDone | UpdateRefusal> {
  return inUpdateTransaction<UpdateDone>(db, false, async (trx) => {
    const changes = await planUpdate(trx, actor, update);
    if ('error' in changes) return changes;
    const before = await currentValues(trx, update, changes, true);
    if ('error' in before) return before;
    await castValues(trx, changes);

    const assignments = sql.join(changes.map((change) => sql`${sql.id(change.column.name)} = ${castToColumn(change.value, change.column)}`));
    const returned = sql.join(changes.map((change, index) => sql`${sql.id(change.column.name)}::text as ${sql.id(`c${index}`)}`));
    let rows: Record<string, string | null>[];
    try {
      ({ rows } = await sql<Record<string, string | null>>`
        update ${sql.id(RECORDS_SCHEMA, update.table)} set ${assignments}
        where ${keyCondition(update.key)} returning ${returned}`.execute(trx));
    } catch (error) {
      const reason = expectedFailure(error);
      if (reason === null) throw error;
      throw new UpdateRefused({ error: 'invalidValue', reason });
    }
    if (rows.length !== 1) throw new UpdateRefused(rows.length === 0 ? { error: 'noRow' } : { error: 'manyRows', count: rows.length });
    const row = rows[0]!;
    const after = changes.map((_change, index) => row[`c${index}`] ?? null);
    return {
      updated: 1,
      table: update.table,
      keyColumn: update.key.column,
      keyValue: update.key.value,
      changes: pairChanges(changes, before, after),
    } as const;
  });
}

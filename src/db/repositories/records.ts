import { type RawBuilder, sql } from 'kysely';
import { capCell, isCredentialColumn } from '../../redaction/masking.ts';
import type {
  ColumnChange,
  ColumnInfo,
  RecordKey,
  RowsPage,
  RowsQuery,
  RowsRefusal,
  RowUpdate,
  TableInfo,
  UpdateDone,
  UpdatePreview,
  UpdateRefusal,
} from '../../tools/data.ts';
import type { Actor } from '../../tools/tool.ts';
import type { Db } from '../database.ts';

/**
 * The operator's own data, read by `read_records` and `describe_tables` and changed by
 * `update_record`: every table of the `records` PostgreSQL schema. Nothing here trusts a name it
 * was given: tables, columns and column types are looked up in information_schema and only the
 * introspected names reach the query, quoted with `sql.id`; values are always bound parameters.
 *
 * One file (over ~250 lines) because its three readers share the introspection and the quoting
 * rules above; apart, a rule fixed in one would be missed in another.
 */
export const RECORDS_SCHEMA = 'records';

/** Page bounds, enforced here as well as in the tool's parameters (the data layer trusts no caller). */
export const MAX_PAGE_ROWS = 50;
export const MAX_PAGE_OFFSET = 10_000;
/** A filter on a text cast cannot use an index; a huge table must not hold a connection for long. */
export const READ_TIMEOUT_MS = 10_000;
/** Columns one update may change: enough for a real edit, few enough for an approver to read. */
export const MAX_UPDATE_COLUMNS = 20;
/** Longest database message passed on in an `invalidValue` refusal, in characters. */
export const MAX_REFUSAL_REASON_CHARS = 300;

interface ColumnRow {
  table_name: string;
  column_name: string;
  type: string;
}

// Arrays and user-defined types are reported as ARRAY / USER-DEFINED; their udt name says more.
const COLUMN_TYPE = sql<string>`case when c.data_type in ('ARRAY', 'USER-DEFINED') then c.udt_name else c.data_type end`;

function toTables(rows: readonly ColumnRow[]): TableInfo[] {
  const tables = new Map<string, ColumnInfo[]>();
  for (const row of rows) {
    let columns = tables.get(row.table_name);
    if (!columns) tables.set(row.table_name, (columns = []));
    columns.push({ name: row.column_name, type: row.type });
  }
  return [...tables].map(([name, columns]) => ({ name, columns }));
}

/** Tables (and views) of the records schema the actor may read, with their columns; admins see all. */
export async function listRecordTables(db: Db, actor: Actor): Promise<TableInfo[]> {
  const granted = actor.isAdmin
    ? sql``
    : sql`and c.table_name in (select g.table_name from table_grants g where g.user_id::text = ${actor.id})`;
  const { rows } = await sql<ColumnRow>`
    select c.table_name, c.column_name, ${COLUMN_TYPE} as type
    from information_schema.columns c
    where c.table_schema = ${RECORDS_SCHEMA} ${granted}
    order by c.table_name, c.ordinal_position`.execute(db);
  return toTables(rows);
}

/**
 * Names of every table (and view) of the records schema, sorted: what an admin may grant. Empty
 * when the schema does not exist yet (a fresh database before `npm run seed`).
 */
export async function listRecordTableNames(db: Db): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select t.table_name from information_schema.tables t
    where t.table_schema = ${RECORDS_SCHEMA}
    order by t.table_name`.execute(db);
  return rows.map((row) => row.table_name);
}

/**
 * PostgreSQL text cannot hold NUL (U+0000): a bound parameter carrying one is refused with
 * "invalid byte sequence" (SQLSTATE 22021) instead of matching nothing, which made the tools fail
 * on a model's stray NUL (found by test/security/fuzz.test.ts). So a name holding one names no
 * table, grant or column, and a compared value holding one equals no cell; a NEW value holding one
 * is still refused by the cast, as an `invalidValue`.
 */
function holdsNul(text: string): boolean {
  return text.includes('\u0000');
}

async function hasGrant(db: Db, userId: string, table: string): Promise<boolean> {
  if (holdsNul(table)) return false;
  // Any mode (READ or WRITE) allows reading. Compared as text: a malformed id simply matches nothing.
  const { rows } = await sql<{ found: number }>`
    select 1 as found from table_grants where user_id::text = ${userId} and table_name = ${table} limit 1`.execute(db);
  return rows.length > 0;
}

async function columnsOf(db: Db, table: string): Promise<ColumnInfo[]> {
  if (holdsNul(table)) return [];
  const { rows } = await sql<ColumnRow>`
    select c.table_name, c.column_name, ${COLUMN_TYPE} as type
    from information_schema.columns c
    where c.table_schema = ${RECORDS_SCHEMA} and c.table_name = ${table}
    order by c.ordinal_position`.execute(db);
  return rows.map((row) => ({ name: row.column_name, type: row.type }));
}

async function primaryKeyOf(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    select k.column_name
    from information_schema.table_constraints t
    join information_schema.key_column_usage k
      on k.constraint_schema = t.constraint_schema and k.constraint_name = t.constraint_name and k.table_name = t.table_name
    where t.constraint_type = 'PRIMARY KEY' and t.table_schema = ${RECORDS_SCHEMA} and t.table_name = ${table}
    order by k.ordinal_position`.execute(db);
  return rows.map((row) => row.column_name);
}

/** Types with a default b-tree order; any other first column is ordered by its text form. */
const ORDERABLE_TYPES = new Set([
  'smallint',
  'integer',
  'bigint',
  'numeric',
  'real',
  'double precision',
  'text',
  'character varying',
  'character',
  'uuid',
  'date',
  'timestamp with time zone',
  'timestamp without time zone',
  'time with time zone',
  'time without time zone',
  'interval',
  'boolean',
]);

/** A stable page order: the primary key, else the first column. */
function orderOf(columns: readonly ColumnInfo[], primaryKey: readonly string[]): RawBuilder<unknown> {
  if (primaryKey.length > 0) return sql.join(primaryKey.map((column) => sql.id(column)));
  const first = columns[0]!;
  return ORDERABLE_TYPES.has(first.type) ? sql.id(first.name) : sql`${sql.id(first.name)}::text`;
}

function clamp(value: number, min: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.trunc(value))) : min;
}

/**
 * One page of one records table, every cell as text. For a non-admin the grant is checked FIRST,
 * before the table is looked up, so an ungranted name costs the same whether or not it exists.
 * Runs in a read-only transaction with a statement timeout.
 */
export async function readRecordRows(db: Db, actor: Actor, query: RowsQuery): Promise<RowsPage | RowsRefusal> {
  return db.transaction().execute(async (trx) => {
    await sql`set transaction read only`.execute(trx);
    await sql`select set_config('statement_timeout', ${String(READ_TIMEOUT_MS)}, true)`.execute(trx);

    if (!actor.isAdmin && !(await hasGrant(trx, actor.id, query.table))) return { error: 'notGranted' } as const;
    const columns = await columnsOf(trx, query.table);
    if (columns.length === 0) return { error: 'noSuchTable' } as const;
    const known = new Set(columns.map((column) => column.name));
    const unknown = query.filters.find((filter) => !known.has(filter.column));
    if (unknown) return { error: 'noSuchColumn', column: unknown.column } as const;

    const limit = clamp(query.limit, 1, MAX_PAGE_ROWS);
    const offset = clamp(query.offset, 0, MAX_PAGE_OFFSET);
    // Positional aliases: a column name never becomes a property name of the driver's row object.
    const selected = sql.join(columns.map((column, index) => sql`${sql.id(column.name)}::text as ${sql.id(`c${index}`)}`));
    const conditions = query.filters.map((filter) =>
      filter.value === null
        ? sql`${sql.id(filter.column)} is null`
        : holdsNul(filter.value)
          ? sql`false`
          : sql`${sql.id(filter.column)}::text = ${filter.value}`,
    );
    const where = conditions.length === 0 ? sql`` : sql`where ${sql.join(conditions, sql` and `)}`;
    const order = orderOf(columns, await primaryKeyOf(trx, query.table));

    // One extra row tells whether another page follows.
    const { rows } = await sql<Record<string, string | null>>`
      select ${selected} from ${sql.id(RECORDS_SCHEMA, query.table)} ${where}
      order by ${order} limit ${limit + 1} offset ${offset}`.execute(trx);
    return {
      columns: columns.map((column) => column.name),
      rows: rows.slice(0, limit).map((row) => columns.map((_column, index) => row[`c${index}`] ?? null)),
      hasMore: rows.length > limit,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Updates (`update_record`). Same rules as reads, plus: a WRITE grant, one row, protected columns.

async function hasWriteGrant(db: Db, userId: string, table: string): Promise<boolean> {
  if (holdsNul(table)) return false;
  const { rows } = await sql<{ found: number }>`
    select 1 as found from table_grants
    where user_id::text = ${userId} and table_name = ${table} and mode = 'WRITE' limit 1`.execute(db);
  return rows.length > 0;
}

/** Admins may write every records table; anyone else needs a WRITE grant for it. */
export async function mayWriteRecords(db: Db, actor: Actor, table: string): Promise<boolean> {
  return actor.isAdmin || hasWriteGrant(db, actor.id, table);
}

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
      if (readOnly) await sql`set transaction read only`.execute(trx);
      await sql`select set_config('statement_timeout', ${String(READ_TIMEOUT_MS)}, true)`.execute(trx);
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

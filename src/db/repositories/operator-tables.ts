import { sql } from 'kysely';
import type { ColumnInfo, TableInfo } from '../../tools/data.ts';
import type { Actor } from '../../tools/tool.ts';
import type { Db } from '../database.ts';

/**
 * The operator's own tables: every table of the `records` PostgreSQL schema, which the data tools
 * list (`describe_tables`: here), read (`read_records`: operator-table-reads.ts) and change
 * (`update_record`: operator-table-updates.ts), and table grants name. Nothing here trusts a name it was given:
 * tables, columns and column types are looked up in information_schema and only the introspected
 * names reach the query, quoted with `sql.id`; values are always bound parameters. This file holds
 * the introspection, the grant checks and those rules, so that the readers and the writer share
 * them (a rule fixed in one place is fixed for all).
 */
export const RECORDS_SCHEMA = 'records';

/** A filter on a text cast cannot use an index; a huge table must not hold a connection for long. */
export const READ_TIMEOUT_MS = 10_000;

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
export function holdsNul(text: string): boolean {
  return text.includes('\u0000');
}

export async function hasGrant(db: Db, userId: string, table: string): Promise<boolean> {
  if (holdsNul(table)) return false;
  // Any mode (READ or WRITE) allows reading. Compared as text: a malformed id simply matches nothing.
  const { rows } = await sql<{ found: number }>`
    select 1 as found from table_grants where user_id::text = ${userId} and table_name = ${table} limit 1`.execute(db);
  return rows.length > 0;
}

export async function columnsOf(db: Db, table: string): Promise<ColumnInfo[]> {
  if (holdsNul(table)) return [];
  const { rows } = await sql<ColumnRow>`
    select c.table_name, c.column_name, ${COLUMN_TYPE} as type
    from information_schema.columns c
    where c.table_schema = ${RECORDS_SCHEMA} and c.table_name = ${table}
    order by c.ordinal_position`.execute(db);
  return rows.map((row) => ({ name: row.column_name, type: row.type }));
}

export async function hasWriteGrant(db: Db, userId: string, table: string): Promise<boolean> {
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

/** Opens a data tool's transaction: read-only when asked, and bounded by the statement timeout. */
export async function boundTransaction(trx: Db, readOnly: boolean): Promise<void> {
  if (readOnly) await sql`set transaction read only`.execute(trx);
  await sql`select set_config('statement_timeout', ${String(READ_TIMEOUT_MS)}, true)`.execute(trx);
}

import { type RawBuilder, sql } from 'kysely';
import type { ColumnInfo, RowsPage, RowsQuery, RowsRefusal } from '../../tools/data.ts';
import type { Actor } from '../../tools/tool.ts';
import type { Db } from '../database.ts';
import { boundTransaction, columnsOf, hasGrant, holdsNul, RECORDS_SCHEMA } from './operator-tables.ts';

/** A page of one of the operator's tables (`read_records`), under the rules of operator-tables.ts. */

/** Page bounds, enforced here as well as in the tool's parameters (the data layer trusts no caller). */
export const MAX_PAGE_ROWS = 50;
export const MAX_PAGE_OFFSET = 10_000;

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
    await boundTransaction(trx, true);

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

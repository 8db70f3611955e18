import type { Actor } from './tool.ts';

/**
 * The read-only data access the built-in tools use, handed to them as `ctx.data`. Tools stay pure:
 * they never see SQL, a connection or a secret-bearing row; `src/db/repositories/tool-data.ts`
 * implements this over the database.
 *
 * Every method answers with what it is safe to show SOMEONE: who may see it is the tool's (and the
 * gate's) decision, but no method returns a token hash, an API key or its ciphertext.
 */
export interface ToolData {
  readonly records: RecordsData;
  readonly configurations: ConfigurationsData;
  readonly users: UsersData;
  /** A frozen snapshot of the process environment, RAW: the tool decides what to redact. */
  environment(): Environment;
  runtimeInfo(): RuntimeInfo;
  /** Up to `limit` of the most recent server log lines, oldest first. */
  recentLogs(limit: number): readonly string[];
}

export type Environment = Readonly<Record<string, string | undefined>>;

export interface ColumnInfo {
  readonly name: string;
  /** The SQL type as the database names it (`integer`, `text`, `timestamp with time zone`, …). */
  readonly type: string;
}

export interface TableInfo {
  /** The table's name inside the `records` schema (unqualified). */
  readonly name: string;
  /** In declaration order. */
  readonly columns: readonly ColumnInfo[];
}

/** An equality test on one column, compared as text; `null` matches SQL NULL. */
export interface RecordFilter {
  readonly column: string;
  readonly value: string | null;
}

export interface RowsQuery {
  /** Unqualified table name in the `records` schema. */
  readonly table: string;
  /** ANDed together. */
  readonly filters: readonly RecordFilter[];
  /** Rows per page; the implementation clamps it to 1…50. */
  readonly limit: number;
  /** Rows skipped; the implementation clamps it to 0…10 000. */
  readonly offset: number;
}

export interface RowsPage {
  readonly columns: readonly string[];
  /** Every cell as the database prints it as text; `null` is SQL NULL. */
  readonly rows: readonly (readonly (string | null)[])[];
  /** True when at least one more row follows this page. */
  readonly hasMore: boolean;
}

/**
 * Why rows were not read. `noSuchTable` and `notGranted` are told apart for the server's sake only:
 * a tool must show both the same way, or a user could probe which tables exist.
 */
export type RowsRefusal =
  | { readonly error: 'noSuchTable' | 'notGranted' }
  | { readonly error: 'noSuchColumn'; readonly column: string };

export interface RecordsData {
  /**
   * The tables of the `records` schema `actor` may read, with their columns, by name: every table
   * for an admin, otherwise only the tables the actor holds a grant for (any mode).
   */
  listTables(actor: Actor): Promise<TableInfo[]>;
  /**
   * One page of one table, in a stable order (primary key, else the first column). A non-admin
   * needs a grant for the table; the grant is checked before the table is even looked up.
   */
  readRows(actor: Actor, query: RowsQuery): Promise<RowsPage | RowsRefusal>;
  /**
   * What `updateRow` would do, without doing it: the one row matching `update.key`, each named
   * column's current value and the new value as the column's type prints it. Same checks and
   * refusals as `updateRow`; runs in a read-only transaction.
   */
  previewUpdate(actor: Actor, update: RowUpdate): Promise<UpdatePreview | UpdateRefusal>;
  /**
   * Changes the named columns of the ONE row matching `update.key`, in one transaction that locks
   * the row first. A non-admin needs a WRITE grant (a READ grant is not enough), checked before the
   * table is looked up. Credential-like columns, read-only columns and the key column are never
   * changed. On any refusal nothing is written.
   */
  updateRow(actor: Actor, update: RowUpdate): Promise<UpdateDone | UpdateRefusal>;
  /** Whether `actor` may write `table` at all: an admin, or a WRITE grant on it (existing or not). */
  mayWrite(actor: Actor, table: string): Promise<boolean>;
}

/** The row an update targets: the one whose `column`, compared as text, equals `value`. */
export interface RecordKey {
  readonly column: string;
  readonly value: string;
}

export interface RowUpdate {
  /** Unqualified table name in the `records` schema. */
  readonly table: string;
  readonly key: RecordKey;
  /**
   * Column → new value, as text the database casts to the column's type (`"42"` for an integer);
   * `null` sets SQL NULL. 1 to 20 entries, applied in this order.
   */
  readonly changes: Readonly<Record<string, string | null>>;
}

export interface ColumnChange {
  readonly column: string;
  /** As the database prints it as text; `null` is SQL NULL. */
  readonly before: string | null;
  /** Preview: the new value cast to the column's type, printed as text. Done: the stored value. */
  readonly after: string | null;
}

export interface UpdatePreview {
  readonly table: string;
  readonly keyColumn: string;
  readonly keyValue: string;
  /** In the order of `RowUpdate.changes`. */
  readonly changes: readonly ColumnChange[];
}

export interface UpdateDone extends UpdatePreview {
  readonly updated: 1;
}

/**
 * Why a row was not (or would not be) updated; nothing was written. As with reads, `noSuchTable`
 * and `notGranted` must look the same to a non-admin. `invalidValue.reason` is the database's own
 * message for a data or constraint error (it names the type or constraint and echoes the caller's
 * value, never another row's); `column` is known when a value failed its cast.
 */
export type UpdateRefusal =
  | { readonly error: 'noSuchTable' | 'notGranted' | 'noRow' }
  | { readonly error: 'noSuchColumn'; readonly column: string }
  | { readonly error: 'protectedColumn'; readonly column: string; readonly reason: ProtectedReason }
  | { readonly error: 'manyRows'; readonly count: number }
  | { readonly error: 'invalidValue'; readonly column?: string; readonly reason: string }
  | { readonly error: 'changeCount'; readonly count: number };

/**
 * `key`: the key column itself cannot be changed. `credential`: credential-like columns (the ones
 * `read_records` masks) can neither be changed nor serve as the key. `readOnly`: generated,
 * identity-always or not-updatable columns.
 */
export type ProtectedReason = 'key' | 'credential' | 'readOnly';

export interface ConfigurationSummary {
  readonly name: string;
  /** The admin's label of the model. */
  readonly modelName: string;
  /** The id the vendor expects (`gpt-4o-mini`, …). */
  readonly providerModelId: string;
  /** OPENAI, ANTHROPIC, OLLAMA, GEMINI or SCRIPTED. */
  readonly providerKind: string;
  /** Empty means "no group restriction". */
  readonly allowedToolGroups: readonly string[];
}

export interface ConfigurationsData {
  /** By name. Never carries a key, a ciphertext, provider settings or a system prompt. */
  list(): Promise<ConfigurationSummary[]>;
}

export interface UserSummary {
  readonly id: string;
  readonly name: string;
  readonly isAdmin: boolean;
  readonly createdAt: Date;
}

export interface UsersData {
  /** Oldest first. */
  list(): Promise<UserSummary[]>;
  /** Full rows as stored (column name → value), oldest first — except the token hash, never included. */
  listRaw(): Promise<Readonly<Record<string, unknown>>[]>;
}

export type RuntimeDbKind = 'postgres' | 'pglite';

export interface RuntimeInfo {
  readonly nodeVersion: string;
  /** Seconds since the service started. */
  readonly uptimeSeconds: number;
  /** Bytes. */
  readonly memory: { readonly rss: number; readonly heapUsed: number };
  readonly dbKind: RuntimeDbKind;
}

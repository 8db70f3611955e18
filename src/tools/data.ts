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
}

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

import type { ConfigurationSummary, Environment, RuntimeDbKind, ToolData, UserSummary } from '../../tools/data.ts';
import type { Db } from '../database.ts';
import { readRecordRows } from './operator-table-reads.ts';
import { previewRecordUpdate, updateRecordRow } from './operator-table-updates.ts';
import { listRecordTables, mayWriteRecords } from './operator-tables.ts';

export interface ToolDataDeps {
  readonly db: Db;
  readonly dbKind: RuntimeDbKind;
  /** What `get_env` shows (after redaction): `environmentSnapshot()` from config.ts. */
  readonly environment: Environment;
  /** The most recent `limit` log lines, oldest first (a ring buffer fed by the logger). */
  readonly recentLogs: (limit: number) => readonly string[];
  /** When the service started; uptime is measured from here. */
  readonly startedAt: Date;
}

/**
 * Configurations as the model may see them. Only these columns are ever selected: the provider's
 * key ciphertext and settings, and the system prompt, never leave the database on this path.
 */
export async function listConfigurationSummaries(db: Db): Promise<ConfigurationSummary[]> {
  const rows = await db
    .selectFrom('configurations')
    .innerJoin('models', 'models.id', 'configurations.model_id')
    .innerJoin('providers', 'providers.id', 'models.provider_id')
    .select([
      'configurations.name as name',
      'models.name as modelName',
      'models.provider_model_id as providerModelId',
      'providers.kind as providerKind',
      'configurations.allowed_tool_groups as allowedToolGroups',
    ])
    .orderBy('configurations.name')
    .execute();
  return rows.map((row) => ({ ...row, allowedToolGroups: Array.isArray(row.allowedToolGroups) ? row.allowedToolGroups : [] }));
}

/** Users without their token hashes: only the four safe columns are selected. */
export async function listUserSummaries(db: Db): Promise<UserSummary[]> {
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name', 'is_admin', 'created_at'])
    .orderBy('created_at')
    .orderBy('name')
    .execute();
  return rows.map((row) => ({ id: row.id, name: row.name, isAdmin: row.is_admin, createdAt: new Date(row.created_at) }));
}

/** Whole user rows, so columns added later show up too — minus the token hash, removed here. */
export async function listUserRowsWithoutHashes(db: Db): Promise<Readonly<Record<string, unknown>>[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('name').execute();
  return rows.map(({ token_hash: _neverShown, ...rest }) => rest);
}

/** The `ctx.data` of the built-in tools, over the service's database and process. */
export function createToolData(deps: ToolDataDeps): ToolData {
  const { db } = deps;
  return {
    records: {
      listTables: (actor) => listRecordTables(db, actor),
      readRows: (actor, query) => readRecordRows(db, actor, query),
      previewUpdate: (actor, update) => previewRecordUpdate(db, actor, update),
      updateRow: (actor, update) => updateRecordRow(db, actor, update),
      mayWrite: (actor, table) => mayWriteRecords(db, actor, table),
    },
    configurations: { list: () => listConfigurationSummaries(db) },
    users: { list: () => listUserSummaries(db), listRaw: () => listUserRowsWithoutHashes(db) },
    environment: () => deps.environment,
    runtimeInfo() {
      const memory = process.memoryUsage();
      return {
        nodeVersion: process.version,
        uptimeSeconds: Math.max(0, (Date.now() - deps.startedAt.getTime()) / 1000),
        memory: { rss: memory.rss, heapUsed: memory.heapUsed },
        dbKind: deps.dbKind,
      };
    },
    recentLogs: (limit) => deps.recentLogs(limit),
  };
}

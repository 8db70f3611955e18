import { randomUUID } from 'node:crypto';
import type { Db } from '../../../src/db/database.ts';
import type { DbKind } from '../../../src/db/create-db.ts';
import { createToolData } from '../../../src/db/repositories/tool-data.ts';
import type { Environment, ToolData } from '../../../src/tools/data.ts';
import type { ToolResult } from '../../../src/tools/result.ts';
import type { Actor, Tool, ToolContext, ToolLogger } from '../../../src/tools/tool.ts';

export const silentLogger: ToolLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A ToolContext as the loop builds one: the acting user, a logger, a live signal, a run id, the data. */
export function toolContext(data: ToolData, actor: Actor | null): ToolContext<ToolData> {
  return { actor, logger: silentLogger, signal: new AbortController().signal, runId: randomUUID(), data };
}

/** What the loop does: validate the raw arguments with the tool's schema, then execute. */
export async function invoke(tool: Tool, rawArgs: unknown, ctx: ToolContext<ToolData>): Promise<ToolResult> {
  const parsed = tool.parameters.safeParse(rawArgs);
  if (!parsed.success) throw new Error(`test passed invalid arguments to ${tool.name}: ${parsed.error.message}`);
  return tool.execute(parsed.data, ctx);
}

/**
 * ToolData whose every member fails the test when touched: proves a refusing tool read nothing.
 * `touched` lists what was reached.
 */
export function untouchableData(): { data: ToolData; touched: string[] } {
  const touched: string[] = [];
  const trap = (path: string) => () => {
    touched.push(path);
    throw new Error(`${path} must not be read`);
  };
  const data: ToolData = {
    records: {
      listTables: trap('records.listTables'),
      readRows: trap('records.readRows'),
      previewUpdate: trap('records.previewUpdate'),
      updateRow: trap('records.updateRow'),
      mayWrite: trap('records.mayWrite'),
    },
    configurations: { list: trap('configurations.list') },
    users: { list: trap('users.list'), listRaw: trap('users.listRaw') },
    environment: trap('environment'),
    runtimeInfo: trap('runtimeInfo'),
    recentLogs: trap('recentLogs'),
  };
  return { data, touched };
}

export interface ToolDataExtras {
  environment?: Environment;
  recentLogs?: (limit: number) => readonly string[];
}

export function toolDataOver(db: Db, kind: DbKind, extras: ToolDataExtras = {}): ToolData {
  return createToolData({
    db,
    dbKind: kind,
    environment: extras.environment ?? {},
    recentLogs: extras.recentLogs ?? (() => []),
    startedAt: new Date(Date.now() - 90_000),
  });
}

/** Stored token hashes in tests carry this, so a leak is easy to spot. */
export const TOKEN_HASH_CANARY = 'canary-token-hash';

/** Inserts a user whose token hash is a canary; returns them as an Actor. */
export async function insertActor(db: Db, name: string, isAdmin: boolean): Promise<Actor> {
  const id = randomUUID();
  await db
    .insertInto('users')
    .values({ id, name, is_admin: isAdmin, token_hash: `${TOKEN_HASH_CANARY}-${name}-${randomUUID()}` })
    .execute();
  return { id, name, isAdmin };
}

/** The JSON-array lines of a read_records text: columns first, then one per row. */
export function jsonLines(content: string): string[][] {
  return content
    .split('\n')
    .filter((line) => line.startsWith('['))
    .map((line) => JSON.parse(line) as string[]);
}

import { sql } from 'kysely';
import type { Db } from '../database.ts';

export interface StoredToolState {
  readonly groups: ReadonlyMap<string, boolean>;
  readonly tools: ReadonlyMap<string, boolean>;
}

/** Every switch, groups and tools in one query (also nested in `loadRunSetup`). */
export function switchesQuery(db: Db) {
  return db
    .selectFrom('tool_group_state')
    .select(['name', 'enabled', sql<boolean>`true`.as('is_group')])
    .unionAll(db.selectFrom('tool_state').select(['name', 'enabled', sql<boolean>`false`.as('is_group')]));
}

export function toToolState(rows: readonly { name: string; enabled: boolean; is_group: boolean }[]): StoredToolState {
  return {
    groups: new Map(rows.filter((row) => row.is_group).map((row) => [row.name, row.enabled])),
    tools: new Map(rows.filter((row) => !row.is_group).map((row) => [row.name, row.enabled])),
  };
}

/** Every stored switch. Missing entries mean "not overridden" (see access/availability.ts). */
export async function loadToolState(db: Db): Promise<StoredToolState> {
  return toToolState(await switchesQuery(db).execute());
}

export async function saveGroupEnabled(db: Db, name: string, enabled: boolean): Promise<void> {
  await db
    .insertInto('tool_group_state')
    .values({ name, enabled })
    .onConflict((oc) => oc.column('name').doUpdateSet({ enabled, updated_at: sql`now()` }))
    .execute();
}

export async function deleteGroupState(db: Db, name: string): Promise<void> {
  await db.deleteFrom('tool_group_state').where('name', '=', name).execute();
}

export async function saveToolEnabled(db: Db, name: string, enabled: boolean): Promise<void> {
  await db
    .insertInto('tool_state')
    .values({ name, enabled })
    .onConflict((oc) => oc.column('name').doUpdateSet({ enabled, updated_at: sql`now()` }))
    .execute();
}

export async function deleteToolState(db: Db, name: string): Promise<void> {
  await db.deleteFrom('tool_state').where('name', '=', name).execute();
}

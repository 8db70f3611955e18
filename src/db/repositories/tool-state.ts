import { sql } from 'kysely';
import type { Db } from '../database.ts';

export interface StoredToolState {
  readonly groups: ReadonlyMap<string, boolean>;
  readonly tools: ReadonlyMap<string, boolean>;
}

/** Every stored switch. Missing entries mean "not overridden" (see access/availability.ts). */
export async function loadToolState(db: Db): Promise<StoredToolState> {
  // One round trip: this runs at the start of every run.
  const rows = await db
    .selectFrom('tool_group_state')
    .select(['name', 'enabled', sql<boolean>`true`.as('is_group')])
    .unionAll(db.selectFrom('tool_state').select(['name', 'enabled', sql<boolean>`false`.as('is_group')]))
    .execute();
  return {
    groups: new Map(rows.filter((row) => row.is_group).map((row) => [row.name, row.enabled])),
    tools: new Map(rows.filter((row) => !row.is_group).map((row) => [row.name, row.enabled])),
  };
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

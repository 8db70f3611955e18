import type { Db, GrantMode, TableGrantRow } from '../database.ts';

export async function listGrantsOfUsers(db: Db, userIds: readonly string[]): Promise<TableGrantRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('table_grants').selectAll().where('user_id', 'in', userIds).orderBy('table_name').execute();
}

export async function saveGrant(db: Db, userId: string, tableName: string, mode: GrantMode): Promise<void> {
  await db
    .insertInto('table_grants')
    .values({ user_id: userId, table_name: tableName, mode })
    .onConflict((oc) => oc.columns(['user_id', 'table_name']).doUpdateSet({ mode }))
    .execute();
}

export async function deleteGrant(db: Db, userId: string, tableName: string): Promise<boolean> {
  const result = await db
    .deleteFrom('table_grants')
    .where('user_id', '=', userId)
    .where('table_name', '=', tableName)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

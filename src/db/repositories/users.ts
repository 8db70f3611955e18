import { onlyUuids } from '../errors.ts';
import { prepared } from '../prepared.ts';
import type { Db, NewUser, UserRow } from '../database.ts';

/** Runs for every authenticated request and websocket operation: compiled once. */
const userByTokenHash = prepared(['tokenHash'], (db, { tokenHash }: { tokenHash: string }) =>
  db.selectFrom('users').selectAll().where('token_hash', '=', tokenHash),
);

export async function findUserByTokenHash(db: Db, tokenHash: string): Promise<UserRow | undefined> {
  return (await userByTokenHash(db, { tokenHash }))[0];
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUsersByIds(db: Db, ids: readonly string[]): Promise<UserRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('users').selectAll().where('id', 'in', valid).execute();
}

export async function findUserByName(db: Db, name: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('name').execute();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertUser(db: Db, user: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function updateUserCredentials(
  db: Db,
  id: string,
  changes: { tokenHash?: string; isAdmin?: boolean },
): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set({
      ...(changes.tokenHash !== undefined ? { token_hash: changes.tokenHash } : {}),
      ...(changes.isAdmin !== undefined ? { is_admin: changes.isAdmin } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

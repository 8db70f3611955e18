import { sql } from 'kysely';
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

export interface UserChanges {
  readonly tokenHash?: string;
  readonly isAdmin?: boolean;
  readonly active?: boolean;
}

export async function updateUserCredentials(db: Db, id: string, changes: UserChanges): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set({
      ...(changes.tokenHash !== undefined ? { token_hash: changes.tokenHash } : {}),
      ...(changes.isAdmin !== undefined ? { is_admin: changes.isAdmin } : {}),
      ...(changes.active !== undefined ? { active: changes.active } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Replaces a user's token digest (the old digest is gone with the statement) and stamps the rotation. */
export async function replaceTokenHash(db: Db, id: string, tokenHash: string): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set({ token_hash: tokenHash, token_rotated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Locks the row of every active admin, in id order (so two lockers never wait on each other in a
 * circle), and returns their ids. Every change that may take away an active admin takes this lock
 * first, inside its transaction: concurrent changes then see each other's effect on who is an active
 * admin instead of each counting the others as still there.
 */
async function lockActiveAdminIds(trx: Db): Promise<string[]> {
  const rows = await trx.selectFrom('users').select('id').where('is_admin', '=', true).where('active', '=', true).orderBy('id').forUpdate().execute();
  return rows.map((row) => row.id);
}

/** Locks the given users' rows (in id order) and returns them. */
async function lockUsers(trx: Db, ids: readonly string[]): Promise<UserRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return trx.selectFrom('users').selectAll().where('id', 'in', valid).orderBy('id').forUpdate().execute();
}

/**
 * What a guard is shown before a change of a user is written: the user as locked, and the ids of
 * the active admins as locked. A guard throws to refuse; nothing is written then.
 */
export type AdminGuard = (target: UserRow, activeAdminIds: readonly string[]) => void;

/** Changes a user under the active-admin lock; `guard` decides first. Undefined when there is no such user. */
export async function updateUserGuarded(db: Db, id: string, changes: UserChanges, guard: AdminGuard): Promise<UserRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const admins = await lockActiveAdminIds(trx);
    const [target] = await lockUsers(trx, [id]);
    if (!target) return undefined;
    guard(target, admins);
    return updateUserCredentials(trx, id, changes);
  });
}

/** What happens to the runs of a deleted user: refuse while there are any, move them, or delete them. */
export const USER_RUNS_ON_DELETE = ['REFUSE', 'REASSIGN', 'PURGE'] as const;
export type UserRunsOnDelete = (typeof USER_RUNS_ON_DELETE)[number];

/** What a deletion guard is shown, everything read under the locks the deletion holds. */
export interface UserRemovalFacts {
  readonly target: UserRow;
  readonly activeAdminIds: readonly string[];
  /** Runs the user owns, in any status. */
  readonly ownedRuns: number;
  /** Of those, RUNNING or WAITING_FOR_APPROVAL. */
  readonly runsInProgress: number;
  /** The user `reassignTo` names, if asked for and present. */
  readonly heir: UserRow | undefined;
}

export interface UserRemoval {
  readonly user: UserRow;
  readonly reassignedRuns: number;
  readonly purgedRuns: number;
}

/**
 * Deletes a user and settles what refers to them, in one transaction, after `guard` accepted the
 * facts (it throws to refuse):
 * - runs: `REASSIGN` gives them to `heirId`; `PURGE` deletes them (their steps go with them);
 * - usage records keep their tokens and cost (configuration budgets and cost history still count
 *   them) but name no user any more, and none of a purged run;
 * - the user's own budgets are deleted; table grants go by the foreign key's cascade.
 * The user's row (and the heir's) is locked first, so a run cannot be started in their name meanwhile.
 * Undefined when there is no such user.
 */
export async function deleteUserGuarded(
  db: Db,
  id: string,
  plan: { readonly runs: UserRunsOnDelete; readonly heirId: string | null },
  guard: (facts: UserRemovalFacts) => void,
): Promise<UserRemoval | undefined> {
  return db.transaction().execute(async (trx) => {
    const activeAdminIds = await lockActiveAdminIds(trx);
    const locked = await lockUsers(trx, plan.heirId === null ? [id] : [id, plan.heirId]);
    const target = locked.find((row) => row.id === id);
    if (!target) return undefined;
    const counts = await trx
      .selectFrom('runs')
      .select((eb) => [
        eb.fn.countAll<string | number>().as('owned'),
        eb.fn.count<string | number>(eb.case().when('status', 'in', ['RUNNING', 'WAITING_FOR_APPROVAL']).then(1).end()).as('inProgress'),
      ])
      .where('user_id', '=', id)
      .executeTakeFirstOrThrow();
    const heir = plan.heirId === null || plan.heirId === id ? undefined : locked.find((row) => row.id === plan.heirId);
    guard({ target, activeAdminIds, ownedRuns: Number(counts.owned), runsInProgress: Number(counts.inProgress), heir });

    let reassignedRuns = 0;
    let purgedRuns = 0;
    if (plan.runs === 'REASSIGN' && heir) {
      const moved = await trx.updateTable('runs').set({ user_id: heir.id }).where('user_id', '=', id).executeTakeFirst();
      reassignedRuns = Number(moved.numUpdatedRows);
    } else if (plan.runs === 'PURGE') {
      await trx
        .updateTable('usage_records')
        .set({ run_id: null })
        .where('run_id', 'in', (eb) => eb.selectFrom('runs').select('id').where('user_id', '=', id))
        .execute();
      const purged = await trx.deleteFrom('runs').where('user_id', '=', id).executeTakeFirst();
      purgedRuns = Number(purged.numDeletedRows);
    }
    await trx.updateTable('usage_records').set({ user_id: null }).where('user_id', '=', id).execute();
    await trx.deleteFrom('budgets').where('scope', '=', 'USER').where('subject_id', '=', id).execute();
    await trx.deleteFrom('users').where('id', '=', id).execute();
    return { user: target, reassignedRuns, purgedRuns };
  });
}

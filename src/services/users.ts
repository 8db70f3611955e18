import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Actor } from '../tools/tool.ts';
import type { Db, GrantMode, UserRow } from '../db/database.ts';
import { GRANT_MODES } from '../db/database.ts';
import * as users from '../db/repositories/users.ts';
import * as grants from '../db/repositories/grants.ts';
import { listRecordTableNames, RECORDS_SCHEMA } from '../db/repositories/operator-tables.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { UserRevocations } from './user-revocations.ts';
import { isUuid, parseInput, requireId, uniquely } from './validate.ts';

/** Tokens carry 256 bits of randomness; only their SHA-256 digest is stored. */
export function generateToken(): string {
  return `alk_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function toActor(row: UserRow): Actor {
  return { id: row.id, name: row.name, isAdmin: row.is_admin };
}

/** Reads `Bearer <token>` (case-insensitive scheme); anything else is no credential at all. */
export function bearerToken(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

export async function authenticate(db: Db, token: string | null): Promise<Actor | null> {
  if (token === null || token.length > 512) return null;
  const row = await users.findUserByTokenHash(db, hashToken(token));
  // An inactive user's token is refused exactly like an unknown one.
  return row?.active ? toActor(row) : null;
}

export const ADMIN_NAME = 'admin';

export type AdminBootstrap =
  | { readonly kind: 'configured'; readonly user: UserRow }
  | { readonly kind: 'generated'; readonly user: UserRow; readonly token: string }
  | { readonly kind: 'existing' };

/**
 * Start-up: with a configured admin token, make sure an ACTIVE admin holds it (the `admin` user's
 * token is rotated to it if needed; a deactivated or demoted holder is restored: the operator's
 * way back in); without one, an empty database gets an admin whose token is returned
 * once for printing. A database that already has users is left alone.
 */
export async function bootstrapAdmin(db: Db, configuredToken: string | null): Promise<AdminBootstrap> {
  // Instances of one deployment start at once on a new database: one bootstraps, the others then find its admin.
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK}, 0)`.execute(trx);
    return bootstrapAdminLocked(trx, configuredToken);
  });
}

/** Lock namespace of the admin bootstrap (0x41524c33), beside the run cap's and the MCP session cap's. */
const BOOTSTRAP_LOCK = 1095912499;

async function bootstrapAdminLocked(db: Db, configuredToken: string | null): Promise<AdminBootstrap> {
  if (configuredToken !== null) {
    const tokenHash = hashToken(configuredToken);
    const holder = await users.findUserByTokenHash(db, tokenHash);
    if (holder) {
      const user = holder.is_admin && holder.active ? holder : await users.updateUserCredentials(db, holder.id, { isAdmin: true, active: true });
      return { kind: 'configured', user: user ?? holder };
    }
    const named = await users.findUserByName(db, ADMIN_NAME);
    if (named) {
      const user = await users.updateUserCredentials(db, named.id, { tokenHash, isAdmin: true, active: true });
      return { kind: 'configured', user: user ?? named };
    }
    const user = await users.insertUser(db, { id: randomUUID(), name: ADMIN_NAME, is_admin: true, token_hash: tokenHash });
    return { kind: 'configured', user };
  }
  if ((await users.countUsers(db)) > 0) return { kind: 'existing' };
  const token = generateToken();
  const user = await users.insertUser(db, { id: randomUUID(), name: ADMIN_NAME, is_admin: true, token_hash: hashToken(token) });
  return { kind: 'generated', user, token };
}

const nameSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

const createUserSchema = z.object({
  name: nameSchema,
  isAdmin: z.boolean().nullish().transform((value) => value ?? false),
});

export async function createUser(db: Db, input: unknown): Promise<{ user: UserRow; token: string }> {
  const { name, isAdmin } = parseInput(createUserSchema, input);
  const token = generateToken();
  const user = await uniquely(`A user named "${name}" already exists.`, () =>
    users.insertUser(db, { id: randomUUID(), name, is_admin: isAdmin, token_hash: hashToken(token) }),
  );
  return { user, token };
}

/** Table names of the operator's `records` schema: plain lower-case SQL identifiers. */
const tableSchema = z
  .string()
  .trim()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case table name (letters, digits, underscores)');

const grantSchema = z.object({
  table: tableSchema,
  mode: z.enum(GRANT_MODES).nullish().transform((value): GrantMode => value ?? 'READ'),
});

export async function grantTable(db: Db, userId: string, input: { table: string; mode?: GrantMode | null }): Promise<UserRow> {
  const { table, mode } = parseInput(grantSchema, input);
  const user = await users.findUserById(db, requireId('User', userId));
  if (!user) throw new NotFoundError('User', userId);
  await assertRecordTable(db, table);
  await grants.saveGrant(db, user.id, table, mode);
  return user;
}

/** Most table names a refusal lists; the rest are counted. */
const LISTED_TABLES = 20;

/**
 * A grant names a table that exists now, so a typo is refused instead of stored silently (the grant
 * would read nothing). Revoking stays possible for a table dropped since.
 */
async function assertRecordTable(db: Db, table: string): Promise<void> {
  const tables = await listRecordTableNames(db);
  if (tables.includes(table)) return;
  const known =
    tables.length === 0
      ? `The "${RECORDS_SCHEMA}" schema has no tables yet: create them there, or run \`npm run seed\` for the demo tables customers and orders.`
      : `Tables you can grant: ${tables.slice(0, LISTED_TABLES).join(', ')}${tables.length > LISTED_TABLES ? ` and ${tables.length - LISTED_TABLES} more` : ''}.`;
  const message = `No table "${table}" in the "${RECORDS_SCHEMA}" schema. ${known}`;
  throw new ValidationError(message, [{ path: ['table'], message }]);
}

export async function revokeTable(db: Db, userId: string, input: { table: string }): Promise<UserRow> {
  const { table } = parseInput(z.object({ table: tableSchema }), input);
  const user = await users.findUserById(db, requireId('User', userId));
  if (!user) throw new NotFoundError('User', userId);
  await grants.deleteGrant(db, user.id, table);
  return user;
}

/** What changing a user's access uses: the database, and where a revocation goes once it committed. */
export interface UserAccessDeps {
  readonly db: Db;
  readonly revocations: UserRevocations;
}

function lastActiveAdmin(user: UserRow): ConflictError {
  return new ConflictError(`"${user.name}" is the last active admin; make another user admin first.`);
}

/** Refuses a change that would leave no active admin (`activeAdminIds` as locked by the repository). */
function guardLastActiveAdmin(losesAdmin: boolean): users.AdminGuard {
  return (target, activeAdminIds) => {
    if (losesAdmin && activeAdminIds.length === 1 && activeAdminIds[0] === target.id) throw lastActiveAdmin(target);
  };
}

/**
 * Gives a user a new token, returned this once; only its digest replaces the old one, so the old
 * token is refused from the next request on, and every open session of the user ends.
 */
export async function rotateToken(deps: UserAccessDeps, userId: string): Promise<{ user: UserRow; token: string }> {
  const token = generateToken();
  const user = await users.replaceTokenHash(deps.db, requireId('User', userId), hashToken(token));
  if (!user) throw new NotFoundError('User', userId);
  deps.revocations.publish({ userId: user.id, reason: 'TOKEN_ROTATED' });
  return { user, token };
}

/**
 * Deactivating refuses the user's token at once and ends their sessions and runs; their history
 * stays, and activating them again restores the same token. The last active admin stays active.
 */
export async function setUserActive(deps: UserAccessDeps, userId: string, active: boolean): Promise<UserRow> {
  let wasActive = false;
  const user = await users.updateUserGuarded(deps.db, requireId('User', userId), { active }, (target, admins) => {
    wasActive = target.active;
    guardLastActiveAdmin(!active)(target, admins);
  });
  if (!user) throw new NotFoundError('User', userId);
  if (wasActive && !active) deps.revocations.publish({ userId: user.id, reason: 'DEACTIVATED' });
  return user;
}

/**
 * Makes a user admin or not; the last active admin cannot be demoted. Every request and websocket
 * operation reads the user anew, so the change applies to the next one; a demotion also ends the
 * user's open sessions, since a stream opened as admin carries what only admins see.
 */
export async function setAdmin(deps: UserAccessDeps, userId: string, isAdmin: boolean): Promise<UserRow> {
  let wasAdmin = false;
  const user = await users.updateUserGuarded(deps.db, requireId('User', userId), { isAdmin }, (target, admins) => {
    wasAdmin = target.is_admin;
    guardLastActiveAdmin(!isAdmin)(target, admins);
  });
  if (!user) throw new NotFoundError('User', userId);
  if (wasAdmin && !isAdmin) deps.revocations.publish({ userId: user.id, reason: 'DEMOTED' });
  return user;
}

const deleteUserSchema = z
  .object({
    runs: z.enum(users.USER_RUNS_ON_DELETE).nullish().transform((value): users.UserRunsOnDelete => value ?? 'REFUSE'),
    reassignTo: z.string().nullish().transform((value) => value ?? null),
  })
  .superRefine((input, ctx) => {
    if (input.runs === 'REASSIGN' && input.reassignTo === null) {
      ctx.addIssue({ code: 'custom', path: ['reassignTo'], message: 'names the user who keeps the runs: required with runs: REASSIGN' });
    }
    if (input.runs !== 'REASSIGN' && input.reassignTo !== null) {
      ctx.addIssue({ code: 'custom', path: ['reassignTo'], message: 'is only read with runs: REASSIGN; leave it out or choose REASSIGN' });
    }
  });

/**
 * Deletes a user. Refused while they own runs unless the caller chose what happens to them
 * (`REASSIGN` to `reassignTo`, or `PURGE`), while any of their runs is in progress, and for the
 * last active admin. See `deleteUserGuarded` for what happens to usage records, budgets and grants.
 */
export async function deleteUser(deps: UserAccessDeps, userId: string, input: unknown): Promise<users.UserRemoval> {
  const { runs, reassignTo } = parseInput(deleteUserSchema, input);
  const id = requireId('User', userId);
  if (reassignTo === id) {
    const message = 'reassignTo: must name another user than the one deleted';
    throw new ValidationError(`Invalid input: ${message}`, [{ path: ['reassignTo'], message: 'must name another user than the one deleted' }]);
  }
  if (reassignTo !== null && !isUuid(reassignTo)) throw new NotFoundError('User', reassignTo);
  const removal = await users.deleteUserGuarded(deps.db, id, { runs, heirId: reassignTo }, (facts) => {
    const { target } = facts;
    if (facts.activeAdminIds.length === 1 && facts.activeAdminIds[0] === target.id) throw lastActiveAdmin(target);
    if (facts.runsInProgress > 0) {
      throw new ConflictError(
        `"${target.name}" has ${plural(facts.runsInProgress, 'run')} in progress; deactivate the user first (setUserActive with active: false cancels them), then delete once they have ended.`,
      );
    }
    if (runs === 'REASSIGN' && !facts.heir) throw new NotFoundError('User', reassignTo ?? '');
    if (runs === 'REFUSE' && facts.ownedRuns > 0) {
      throw new ConflictError(
        `"${target.name}" owns ${plural(facts.ownedRuns, 'run')}; delete again with runs: REASSIGN and reassignTo (another user keeps them) or runs: PURGE (they are deleted; their usage stays counted).`,
      );
    }
  });
  if (!removal) throw new NotFoundError('User', userId);
  deps.revocations.publish({ userId: removal.user.id, reason: 'DELETED' });
  return removal;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

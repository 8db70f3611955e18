import { z } from 'zod';
import type { Db } from '../db/database.ts';
import { findUserById } from '../db/repositories/users.ts';
import { createLocalBroadcast, type Broadcast } from '../runtime/broadcast.ts';
import { isUuid } from './validate.ts';

/**
 * Why every open session of a user must end now: their token was replaced, they were deactivated or
 * deleted, or they lost the admin role their open streams were started with.
 */
export const REVOCATION_REASONS = ['TOKEN_ROTATED', 'DEACTIVATED', 'DELETED', 'DEMOTED'] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

/** A user lost the access their open connections were authenticated with. */
export interface UserRevocation {
  readonly userId: string;
  readonly reason: RevocationReason;
}

/** A revocation as it crosses to other instances (validated on arrival like any outside value). */
export const userRevocationSchema: z.ZodType<UserRevocation> = z.object({ userId: z.string().min(1).max(100), reason: z.enum(REVOCATION_REASONS) });

/**
 * Carries revocations from the users service (which publishes only after the change committed) to
 * whoever holds that user's sessions: the server's open websockets and SSE streams, and the run
 * manager's runs, in every instance (with REDIS_URL, over Redis; every instance also refuses the
 * token at the next request or websocket operation, each being authenticated against the database).
 */
export type UserRevocations = Broadcast<UserRevocation>;

export const createUserRevocations = (onListenerError: (error: unknown) => void): UserRevocations => createLocalBroadcast(onListenerError);

/**
 * How long after a token rotation a TOKEN_ROTATED revocation from another instance is still borne
 * out (ms): it is published right after the rotation commits and lives at most a minute on the bus;
 * the rest covers the difference between the database's clock and this instance's.
 */
export const ROTATION_CONFIRM_WINDOW_MS = 5 * 60_000;

/**
 * Whether the database bears out a revocation that came from another instance, read from the user's
 * row: gone (DELETED, and any reason: a deleted user has lost all access), inactive (DEACTIVATED),
 * not admin (DEMOTED), token replaced within ROTATION_CONFIRM_WINDOW_MS (TOKEN_ROTATED). A forged
 * revocation of a user who still has their access is not acted on: it neither closes their sessions
 * nor cancels their runs. (A user deactivated and activated again before the message arrives keeps
 * their sessions: they have their access, with the same token, again.)
 */
export async function confirmRevocation(db: Db, { userId, reason }: UserRevocation, now = Date.now()): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const user = await findUserById(db, userId);
  if (!user) return true;
  switch (reason) {
    case 'DELETED':
      return false;
    case 'DEACTIVATED':
      return !user.active;
    case 'DEMOTED':
      return !user.is_admin;
    case 'TOKEN_ROTATED':
      return user.token_rotated_at !== null && now - user.token_rotated_at.getTime() <= ROTATION_CONFIRM_WINDOW_MS;
  }
}

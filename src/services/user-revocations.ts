import { z } from 'zod';
import { createLocalBroadcast, type Broadcast } from '../runtime/broadcast.ts';

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

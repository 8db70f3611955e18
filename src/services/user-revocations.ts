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

/**
 * Carries revocations from the users service (which publishes only after the change committed) to
 * whoever holds that user's sessions: the server's open websockets and SSE streams, and the run
 * manager's runs. The in-process implementation serves one instance; a bus over Redis pub/sub can
 * implement the same two methods for several. Until then, an instance that did not make the change
 * still refuses the user's token at the next request or websocket operation (every one is
 * authenticated against the database), but neither closes the streams already open there nor
 * cancels the runs it drives for that user.
 */
export interface UserRevocations {
  publish(revocation: UserRevocation): void;
  /** Listens from now on; returns the function that stops listening. */
  subscribe(listener: (revocation: UserRevocation) => void): () => void;
}

/**
 * Listeners run synchronously, in subscription order; one that throws is reported to `onListenerError`
 * and does not keep the others from running (a revocation must reach every holder).
 */
export function createUserRevocations(onListenerError: (error: unknown) => void): UserRevocations {
  const listeners = new Set<(revocation: UserRevocation) => void>();
  return {
    publish(revocation) {
      for (const listener of [...listeners]) {
        try {
          listener(revocation);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      const entry = (revocation: UserRevocation) => listener(revocation);
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
  };
}

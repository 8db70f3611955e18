import { useState } from 'preact/hooks';
import type { Document } from '../session.ts';
import { useSession } from './use-session.ts';

export interface MutationState<TResult, TVariables> {
  /** Sends the mutation: its data, or null when the request failed (then `error` says why). */
  readonly mutate: (variables: TVariables) => Promise<TResult | null>;
  readonly busy: boolean;
  readonly error: string | null;
}

/**
 * A mutation a button sends. A refusal the API types (a member of an `… | Error` union) is data,
 * for the caller to read; `error` holds what failed on the way (a lost connection, a GraphQL error).
 */
export function useMutation<TResult, TVariables>(document: Document<TResult, TVariables>): MutationState<TResult, TVariables> {
  const { session } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const mutate = async (variables: TVariables): Promise<TResult | null> => {
    setBusy(true);
    setError(null);
    try {
      return await session.request(document, variables);
    } catch (failure) {
      setError((failure as Error).message);
      return null;
    } finally {
      setBusy(false);
    }
  };
  return { mutate, busy, error };
}

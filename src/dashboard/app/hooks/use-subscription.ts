import { useEffect, useRef, useState } from 'preact/hooks';
import type { Document } from '../session.ts';
import { useSession } from './use-session.ts';

/**
 * A subscription for as long as the component shows it, opened again when its variables change
 * (compared by value). `onData` may change between renders: the latest one gets each result.
 */
export function useSubscription<TResult, TVariables>(
  document: Document<TResult, TVariables>,
  variables: TVariables,
  onData: (data: TResult) => void,
  { skip = false } = {},
): { readonly error: string | null } {
  const { session } = useSession();
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(onData);
  latest.current = onData;
  const key = JSON.stringify(variables ?? {});
  useEffect(() => {
    if (skip) return;
    setError(null);
    return session.subscribe(
      document,
      variables,
      (data) => latest.current(data),
      (failure) => setError(failure.message),
    );
  }, [session, document, key, skip]);
  return { error };
}

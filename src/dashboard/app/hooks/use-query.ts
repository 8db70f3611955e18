import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Document } from '../session.ts';
import { useSession } from './use-session.ts';

export interface QueryState<TResult> {
  /** The last answer, kept while a reload runs (null before the first). */
  readonly data: TResult | null;
  readonly error: string | null;
  readonly loading: boolean;
  /** Asks again (after a mutation changed what the query reads). */
  readonly reload: () => void;
}

/**
 * A query, asked again when its variables change (compared by value) or on `reload()`; an answer
 * to variables no longer current is dropped. `skip` holds it (no configuration chosen yet, say).
 */
export function useQuery<TResult, TVariables>(document: Document<TResult, TVariables>, variables?: TVariables, { skip = false } = {}): QueryState<TResult> {
  const { session } = useSession();
  const [data, setData] = useState<TResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(!skip);
  const [generation, setGeneration] = useState(0);
  const key = JSON.stringify(variables ?? {});
  useEffect(() => {
    if (skip) return;
    let current = true;
    setLoading(true);
    session.request(document, variables).then(
      (answer) => {
        if (!current) return;
        setData(answer);
        setError(null);
        setLoading(false);
      },
      (failure: Error) => {
        if (!current) return;
        setError(failure.message);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [session, document, key, skip, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data, error, loading, reload };
}

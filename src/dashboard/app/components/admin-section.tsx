// The frame every section of the Admin page shares: its data (reloaded whenever anything on the
// page was saved), its heading and "New …" button, the open form, and what the last action did.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '../hooks/use-query.ts';
import { useSession } from '../hooks/use-session.ts';
import type { Document, Session } from '../session.ts';

/** The open form: its section and the id it edits (null for a new one). One form is open at a time. */
export interface OpenForm {
  readonly section: string;
  readonly id: string | null;
}

/** What the Admin page hands each of its sections. */
export interface AdminProps {
  readonly open: OpenForm | null;
  readonly setOpen: (open: OpenForm | null) => void;
  /** Bumped after every save or delete anywhere on the page: each section reloads its data then. */
  readonly version: number;
  readonly onChanged: () => void;
}

/** A query's data, reloaded when `version` changes; `setError` shows what a section's own action failed on. */
export function useAdminData<TResult, TVariables>(document: Document<TResult, TVariables>, version: number) {
  const { data, error: failed, reload } = useQuery(document);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (version > 0) reload();
  }, [version]);
  return { data, error: error ?? failed, setError, reload };
}

/** Sends a delete mutation; answers null when it was deleted, else the message to show. */
export async function deleteWith<TResult, TVariables>(session: Session, document: Document<TResult, TVariables>, variables: TVariables, field: keyof TResult): Promise<string | null> {
  try {
    const answer = (await session.request(document, variables))[field] as { __typename?: string; message?: string };
    return answer.__typename === 'Deleted' || answer.__typename === 'DeleteUserPayload' ? null : (answer.message ?? 'The server refused this.');
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * A section's share of the page's state: the form open in it (`editing`), its last notice, `done`
 * (a form closed: with a message when it saved) and `remove` (a row deleted, or the refusal shown).
 */
export function useSectionState(section: string, { open, setOpen, onChanged }: AdminProps, setError: (message: string | null) => void) {
  const { session } = useSession();
  const [notice, setNotice] = useState<string | null>(null);
  const editing = open?.section === section ? open : null;
  const done = (message: string | null) => {
    setOpen(null);
    if (message) {
      setNotice(message);
      onChanged();
    }
  };
  const remove = async <TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables, field: keyof TResult, message: string) => {
    setError(null);
    const refused = await deleteWith(session, document, variables, field);
    if (refused) return setError(refused);
    setNotice(message);
    onChanged();
  };
  const openForm = (id: string | null) => setOpen({ section, id });
  return { session, notice, setNotice, editing, done, remove, openForm };
}

interface SectionProps {
  readonly id: string;
  readonly title: string;
  readonly intro?: string;
  readonly newLabel?: string;
  readonly onNew?: () => void;
  readonly form?: ComponentChildren;
  readonly notice?: string | null;
  readonly error?: string | null;
  readonly children?: ComponentChildren;
}

/**
 * A section: heading, one line on what it configures, its "New …" button, then `form` (the open
 * form, if it is this section's), the outcome of the last action (a live status line, errors as
 * an alert) and the list.
 */
export function AdminSection({ id, title, intro, newLabel, onNew, form, notice, error, children }: SectionProps) {
  // No aria-labelledby: a section (or form) named "Models" would also answer getByLabel('Model').
  return (
    <section class="admin-section" id={`${id}-section`}>
      <div class="section-head">
        <h2 id={`${id}-heading`}>{title}</h2>
        {newLabel ? (
          <button type="button" class="primary" onClick={onNew}>
            {newLabel}
          </button>
        ) : null}
      </div>
      {intro ? <p class="intro">{intro}</p> : null}
      {form}
      <p role="status" class="notice">
        {notice ?? ''}
      </p>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      {children}
    </section>
  );
}

/** "Loading…", the empty line, or the table. */
export function listOr<T>(rows: readonly T[] | null | undefined, empty: string, table: (rows: readonly T[]) => ComponentChildren): ComponentChildren {
  if (rows === null || rows === undefined) return <p role="status">Loading…</p>;
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  return table(rows);
}

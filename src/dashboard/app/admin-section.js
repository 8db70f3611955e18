// The frame every section of the Admin page shares: its data (reloaded whenever anything on the
// page was saved), its heading and "New …" button, the open form, and what the last action did.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

/** A query's data, reloaded when `version` changes (the Admin page bumps it after every save or delete). */
export function useAdminData(session, document, version) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let current = true;
    session.request(document).then(
      (value) => current && setData(value),
      (failure) => current && setError(failure.message),
    );
    return () => {
      current = false;
    };
  }, [session, version]);
  return { data, error, setError };
}

/** Sends a delete mutation; answers null when it was deleted, else the message to show. */
export async function deleteWith(session, document, variables, field) {
  try {
    const answer = (await session.request(document, variables))[field];
    return answer.__typename === 'Deleted' || answer.__typename === 'DeleteUserPayload' ? null : answer.message;
  } catch (error) {
    return error.message;
  }
}

/**
 * A section: heading, one line on what it configures, its "New …" button, then `form` (the open
 * form, if it is this section's), the outcome of the last action (a live status line, errors as
 * an alert) and the list.
 */
export function AdminSection({ id, title, intro, newLabel, onNew, form, notice, error, children }) {
  // No aria-labelledby: a section (or form) named "Models" would also answer getByLabel('Model').
  return html`<section class="admin-section" id=${`${id}-section`}>
    <div class="section-head">
      <h2 id=${`${id}-heading`}>${title}</h2>
      ${newLabel ? html`<button type="button" class="primary" onClick=${onNew}>${newLabel}</button>` : null}
    </div>
    ${intro ? html`<p class="intro">${intro}</p>` : null}
    ${form}
    <p role="status" class="notice">${notice ?? ''}</p>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    ${children}
  </section>`;
}

/** "Loading…", the empty line, or the table. */
export function listOr(rows, empty, table) {
  if (rows === null || rows === undefined) return html`<p role="status">Loading…</p>`;
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return table();
}

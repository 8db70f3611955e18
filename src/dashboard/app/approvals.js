import { useEffect, useState } from 'preact/hooks';
import { APPROVAL_REQUESTS, APPROVE_RUN } from './documents.ts';
import { html, pretty, runHref } from './html.js';

const EXPLAIN = {
  ForbiddenError: (message) => `Refused: ${message} (four eyes: another person must decide a run that needs a second approver, and approving needs that you could run every pending write yourself).`,
  StaleApprovalError: (message) => `This decision is out of date: ${message} The queue shows the turn the run waits on now; decide that one.`,
};

/** The live approvals queue: each waiting run with its previews, approved or denied here. */
export function ApprovalsPage({ session }) {
  const [waiting, setWaiting] = useState(() => new Map());
  const [messages, setMessages] = useState({});
  const [error, setError] = useState(null);

  useEffect(
    () =>
      session.subscribe(
        APPROVAL_REQUESTS,
        {},
        (data) => {
          const event = data.approvalRequests;
          setWaiting((current) => {
            const next = new Map(current);
            if (event.kind === 'WAITING') next.set(event.run.id, event);
            else next.delete(event.run.id);
            return next;
          });
        },
        (e) => setError(e.message),
      ),
    [session],
  );

  const decide = async (entry, approved) => {
    setMessages((m) => ({ ...m, [entry.run.id]: null }));
    try {
      const data = await session.request(APPROVE_RUN, { id: entry.run.id, turnDigest: entry.turnDigest, approved });
      const result = data.approveRun;
      const text =
        result.__typename === 'Run'
          ? `${approved ? 'Approved' : 'Denied'}: the run resumes (now ${result.status}).`
          : (EXPLAIN[result.__typename] ?? ((m) => m))(result.message);
      setMessages((m) => ({ ...m, [entry.run.id]: { ok: result.__typename === 'Run', text } }));
    } catch (e) {
      setMessages((m) => ({ ...m, [entry.run.id]: { ok: false, text: e.message } }));
    }
  };

  const entries = [...waiting.values()];
  const decided = Object.entries(messages).filter(([id, m]) => m && !waiting.has(id));
  return html`
    <h1>Approvals</h1>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    ${decided.map(([id, m]) => html`<p role=${m.ok ? 'status' : 'alert'} class=${m.ok ? 'ok' : 'error'}>Run <a href=${runHref(id)}>${id}</a>: ${m.text}</p>`)}
    ${entries.length === 0
      ? html`<p class="empty" id="approvals-empty">No run waits for a decision. Runs whose writes need approval appear here as soon as they stop.</p>`
      : html`<ul class="approvals" id="approvals">
          ${entries.map(
            (entry) => html`<li key=${entry.run.id} data-run-id=${entry.run.id}>
              <h2>Run <a href=${runHref(entry.run.id)}>${entry.run.id}</a></h2>
              <p>${entry.run.configuration?.name ?? '—'} · started by ${entry.run.user?.name ?? '—'}${entry.run.configuration?.requireSecondApprover ? ' · needs a second approver' : ''}</p>
              ${entry.run.prompt ? html`<pre class="prompt">${entry.run.prompt}</pre>` : null}
              <h3>Pending writes</h3>
              <ul>
                ${(entry.pendingCalls ?? []).map(
                  (call) => html`<li><code>${call.name}</code>
                    ${call.preview ? html`<pre class="preview">${call.preview}</pre>` : null}
                    <details><summary>Arguments</summary><pre>${pretty(call.arguments)}</pre></details></li>`,
                )}
              </ul>
              <div class="actions">
                <button type="button" class="approve" onClick=${() => decide(entry, true)}>Approve</button>
                <button type="button" class="deny" onClick=${() => decide(entry, false)}>Deny</button>
              </div>
              ${messages[entry.run.id] ? html`<p role=${messages[entry.run.id].ok ? 'status' : 'alert'} class=${messages[entry.run.id].ok ? 'ok' : 'error'}>${messages[entry.run.id].text}</p>` : null}
            </li>`,
          )}
        </ul>`}
  `;
}

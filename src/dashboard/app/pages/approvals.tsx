import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { APPROVAL_REQUESTS, APPROVE_RUN } from '../documents.ts';
import { pretty, runHref, shortRunId } from '../format.ts';
import type { ConsoleApprovalRequestsSubscription } from '../gql/graphql.ts';
import { useMutation } from '../hooks/use-mutation.ts';
import { useSubscription } from '../hooks/use-subscription.ts';

type Request = ConsoleApprovalRequestsSubscription['approvalRequests'];
interface Outcome {
  readonly ok: boolean;
  readonly text: string;
}

/** What a refusal means for the person deciding, by the error's type. */
const EXPLAIN: Record<string, (message: string) => string> = {
  ForbiddenError: (message) =>
    `Refused: ${message} (four eyes: another person must decide a run that needs a second approver, and approving needs that you could run every pending write yourself).`,
  StaleApprovalError: (message) => `This decision is out of date: ${message} The queue shows the turn the run waits on now; decide that one.`,
};

function OutcomeNote({ outcome, children }: { outcome: Outcome; children?: ComponentChildren }) {
  return (
    <p role={outcome.ok ? 'status' : 'alert'} class={outcome.ok ? 'ok' : 'error'}>
      {children}
      {outcome.text}
    </p>
  );
}

/** The run's link, named by its short id (the full id stays in the href). */
function RunLink({ id }: { id: string }) {
  return <a href={runHref(id)}>Run {shortRunId(id)}</a>;
}

/** One waiting run: its previews, Approve and Deny. */
function WaitingRun({ entry, outcome, onDecide, busy }: { entry: Request; outcome: Outcome | undefined; onDecide: (approved: boolean) => void; busy: boolean }) {
  const { run } = entry;
  return (
    <li data-run-id={run.id}>
      <h2>
        <RunLink id={run.id} />
      </h2>
      <p>
        {run.configuration?.name ?? '—'} · started by {run.user?.name ?? '—'}
        {run.configuration?.requireSecondApprover ? ' · needs a second approver' : ''}
      </p>
      {run.prompt ? <pre class="prompt">{run.prompt}</pre> : null}
      <h3>Pending writes</h3>
      <ul>
        {(entry.pendingCalls ?? []).map((call) => (
          <li key={call.id}>
            <code>{call.name}</code>
            {call.preview ? <pre class="preview">{call.preview}</pre> : null}
            <details>
              <summary>Arguments</summary>
              <pre>{pretty(call.arguments)}</pre>
            </details>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" class="approve" disabled={busy} onClick={() => onDecide(true)}>
          Approve
        </button>
        <button type="button" class="deny" disabled={busy} onClick={() => onDecide(false)}>
          Deny
        </button>
      </div>
      {outcome ? <OutcomeNote outcome={outcome} /> : null}
    </li>
  );
}

/** The live approvals queue: each waiting run with its previews, approved or denied here. */
export function ApprovalsPage() {
  const [waiting, setWaiting] = useState<ReadonlyMap<string, Request>>(() => new Map());
  const [outcomes, setOutcomes] = useState<Readonly<Record<string, Outcome>>>({});
  const feed = useSubscription(APPROVAL_REQUESTS, {}, (data) => {
    const event = data.approvalRequests;
    setWaiting((current) => {
      const next = new Map(current);
      if (event.kind === 'WAITING') next.set(event.run.id, event);
      else next.delete(event.run.id);
      return next;
    });
  });
  const approve = useMutation(APPROVE_RUN);

  const decide = async (entry: Request, approved: boolean) => {
    const id = entry.run.id;
    setOutcomes(({ [id]: _, ...rest }) => rest);
    // A queue entry always carries the digest of the turn it waits on.
    const data = await approve.mutate({ id, turnDigest: entry.turnDigest ?? '', approved });
    // null: the request itself failed, and approve.error says why (shown at the top).
    if (!data) return;
    const result = data.approveRun;
    const text =
      result.__typename === 'Run'
        ? `${approved ? 'Approved' : 'Denied'}: the run resumes (now ${result.status}).`
        : (EXPLAIN[result.__typename] ?? ((message: string) => message))(result.message);
    setOutcomes((current) => ({ ...current, [id]: { ok: result.__typename === 'Run', text } }));
  };

  const entries = [...waiting.values()];
  // A decided run leaves the queue; its outcome stays above it.
  const decided = Object.entries(outcomes).filter(([id]) => !waiting.has(id));
  const error = feed.error ?? (approve.error ? `The decision was not sent: ${approve.error}` : null);
  return (
    <>
      <h1>Approvals</h1>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      {decided.map(([id, outcome]) => (
        <OutcomeNote key={id} outcome={outcome}>
          <RunLink id={id} />:{' '}
        </OutcomeNote>
      ))}
      {entries.length === 0 ? (
        <p class="empty" id="approvals-empty">
          No run waits for a decision. Runs whose writes need approval appear here as soon as they stop.
        </p>
      ) : (
        <ul class="approvals" id="approvals">
          {entries.map((entry) => (
            <WaitingRun key={entry.run.id} entry={entry} outcome={outcomes[entry.run.id]} busy={approve.busy} onDecide={(approved) => void decide(entry, approved)} />
          ))}
        </ul>
      )}
    </>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { CANCEL_RUN, RUN, RUN_EVENTS } from './documents.ts';
import { formatCost, formatTime, html, pretty } from './html.js';

const PRIVACY_NOTE = {
  FULL: 'Privacy level FULL: this copy is verbatim; nothing is hidden.',
  REDACTED: 'Privacy level REDACTED: secret shapes and e-mail addresses are masked and every string is capped at 2 000 characters in this copy.',
  METADATA: 'Privacy level METADATA: prompts, model answers, tool arguments and tool output are not kept; you see names, sizes, tokens, cost and timings only.',
  NONE: 'Privacy level NONE: no content is kept; you see names, sizes, tokens, cost and timings only.',
};

function Artifact({ artifact }) {
  switch (artifact.__typename) {
    case 'TableArtifact':
      return html`<figure class="artifact table-artifact">
        <figcaption>${artifact.label || 'Table'}</figcaption>
        <div class="scroll"><table>
          <thead><tr>${artifact.columns.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead>
          <tbody>${artifact.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
        </table></div>
      </figure>`;
    case 'TextArtifact':
      return html`<figure class="artifact text-artifact"><figcaption>${artifact.label || 'Text'}</figcaption><pre>${artifact.text}</pre></figure>`;
    default:
      // UnknownArtifact, or a member this console does not know yet: shown as JSON, never dropped.
      return html`<figure class="artifact unknown-artifact">
        <figcaption>${artifact.label || 'Artifact'} (type ${artifact.type ?? artifact.__typename ?? 'unknown'})</figcaption>
        <pre>${pretty(artifact.data ?? artifact)}</pre>
      </figure>`;
  }
}

/** What this copy leaves out, naming the level that hid it (a viewer who sees the live stream sees all). */
function Hidden({ what, level }) {
  return html`<p class="hidden-note">${what} not shown (privacy level ${level ?? 'of this run'}).</p>`;
}

/** The messages a REQUEST step sent, one per turn: system, user, assistant (with its calls), tool. */
function Messages({ messages }) {
  return html`<ol class="messages">
    ${messages.map(
      (message, index) => html`<li key=${index} class=${`message message-${message?.role ?? 'unknown'}`} data-role=${message?.role ?? 'unknown'}>
        <h4>${message?.role ?? 'message'}${message?.role === 'tool' && message.toolName ? html` · <code>${message.toolName}</code>` : null}${message?.isError ? ' (error)' : null}</h4>
        ${typeof message?.content === 'string' ? html`<pre class="message-content">${message.content}</pre>` : html`<pre>${pretty(message)}</pre>`}
        ${message?.toolCalls?.length ? html`<details><summary>Tool calls (${message.toolCalls.length})</summary><pre>${pretty(message.toolCalls)}</pre></details>` : null}
      </li>`,
    )}
  </ol>`;
}

function Step({ step, level }) {
  const usage = step.usage ? html`<p class="usage">Tokens ${step.usage.promptTokens} in / ${step.usage.completionTokens} out · ${formatCost(step.usage.cost)}</p>` : null;
  let body;
  if (step.kind === 'LLM') {
    body = html`
      ${step.content !== null && step.content !== undefined ? html`<h4>Model answer</h4><pre class="content">${step.content}</pre>` : html`<${Hidden} what=${`Model answer (${step.contentLength ?? 0} characters)`} level=${level} />`}
      ${step.thinking ? html`<details><summary>Thinking</summary><pre>${step.thinking}</pre></details>` : null}
      ${step.requestedToolNames?.length ? html`<p>Tool calls: ${step.requestedToolNames.join(', ')}</p>` : null}
      ${step.requestedToolCalls?.length ? html`<details><summary>Tool calls requested</summary><pre>${pretty(step.requestedToolCalls)}</pre></details>` : null}
    `;
  } else if (step.kind === 'TOOL') {
    body = html`
      <p>Tool <code>${step.toolName ?? '?'}</code>${step.outcomeUnknown
        ? html` <strong class="error-text">outcome unknown</strong>: it was running when its server stopped, and was not run again`
        : step.toolIsError ? html` <strong class="error-text">returned an error</strong>` : null}</p>
      ${step.toolArguments !== null && step.toolArguments !== undefined ? html`<details><summary>Arguments</summary><pre>${pretty(step.toolArguments)}</pre></details>` : null}
      ${step.toolResult !== null && step.toolResult !== undefined
        ? html`<h4>What the model received</h4><pre class="tool-result">${step.toolResult}</pre>`
        : html`<${Hidden} what=${`Tool output (${step.toolResultLength ?? 0} characters)`} level=${level} />`}
      ${step.artifacts?.length
        ? html`<h4>Artifacts</h4>${step.artifacts.map((artifact) => html`<${Artifact} artifact=${artifact} />`)}`
        : step.toolArtifactsCount
          ? html`<${Hidden} what=${`${step.toolArtifactsCount} artifact(s) of type ${(step.toolArtifactTypes ?? []).join(', ')}`} level=${level} />`
          : null}
    `;
  } else if (step.kind === 'APPROVAL') {
    body = step.approval
      ? html`<p>${step.approval.approved ? 'Approved' : 'Denied'} by ${step.approval.approverName} at ${formatTime(step.approval.decidedAt)}</p>`
      : html`<p>Approval step</p>`;
  } else if (step.kind === 'REQUEST') {
    body = Array.isArray(step.messagesSent)
      ? html`<details open><summary>Messages sent (${step.messagesSent.length})</summary><${Messages} messages=${step.messagesSent} /></details>`
      : html`<${Hidden} what=${`Messages sent (${step.messagesSentCount ?? 0})`} level=${level} />`;
  } else {
    body = step.content !== null && step.content !== undefined ? html`<pre class="content">${step.content}</pre>` : null;
  }
  return html`<li class=${`step step-${step.kind.toLowerCase()}`} data-sequence=${step.sequence} data-kind=${step.kind}>
    <h3>Step ${step.sequence} · ${step.kind} · round ${step.round}</h3>
    ${body}${usage}
  </li>`;
}

/** One run: its header, then every step as `runEvents` replays and streams them. */
export function InspectorPage({ session, viewer, runId }) {
  const [run, setRun] = useState(null);
  const [steps, setSteps] = useState([]);
  const [suspended, setSuspended] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [missing, setMissing] = useState(false);
  /** What a RunResumedEvent's reason means for an operator watching the run. */
  const RESUMED = {
    LEASE_EXPIRED: 'The server running this run stopped answering, and another took it over',
    HANDED_OVER: 'The server running this run was stopped, and handed it over to another',
    RESTARTED: 'The server was restarted and continued this run',
  };

  useEffect(() => {
    session.request(RUN, { id: runId }).then(
      (data) => (data.run ? setRun((current) => ({ ...data.run, ...(current ?? {}) })) : setMissing(true)),
      (e) => setError(e.message),
    );
    return session.subscribe(
      RUN_EVENTS,
      { runId },
      (data) => {
        const event = data.runEvents;
        if (event.__typename === 'RunStepEvent') {
          setSteps((current) => (current.some((s) => s.sequence === event.step.sequence) ? current : [...current, event.step].sort((a, b) => a.sequence - b.sequence)));
          setSuspended(null);
        } else if (event.__typename === 'RunSuspendedEvent') {
          setSuspended(event);
          setRun((current) => ({ ...(current ?? {}), ...event.run }));
        } else {
          setRun((current) => ({ ...(current ?? {}), ...event.run }));
          if (event.__typename === 'RunFinishedEvent') setSuspended(null);
          if (event.__typename === 'RunResumedEvent') setNotice(`${RESUMED[event.reason] ?? 'Taken over by another server'}; it goes on from step ${event.fromSequence}.`);
        }
      },
      (e) => setError(e.message),
    );
  }, [session, runId]);

  const cancel = async () => {
    try {
      const data = await session.request(CANCEL_RUN, { id: runId });
      if (data.cancelRun.__typename === 'Run') setNotice('Cancel requested: the run stops at its next step boundary.');
      else setError(data.cancelRun.message);
    } catch (e) {
      setError(e.message);
    }
  };

  const inFlight = run && (run.status === 'RUNNING' || run.status === 'WAITING_FOR_APPROVAL');
  return html`
    <h1>Run <code>${runId}</code></h1>
    <p><a href="#/runs">Back to runs</a></p>
    ${missing ? html`<p role="alert" class="error" id="run-missing">No run with this id is visible to you. Go back to the runs list.</p>` : null}
    ${error && !missing ? html`<p role="alert" class="error">${error}</p>` : null}
    ${notice ? html`<p role="status">${notice}</p>` : null}
    ${run
      ? html`<section aria-labelledby="run-summary" class="summary">
          <h2 id="run-summary">Summary</h2>
          <dl>
            <dt>Status</dt><dd id="run-status" data-status=${run.status}>${run.status}${run.terminationReason && run.terminationReason !== run.status ? ` (${run.terminationReason})` : ''}</dd>
            <dt>Kind</dt><dd id="run-kind">${run.kind === 'MCP' ? 'MCP session (one TOOL step per call of an MCP client)' : 'Agent run'}</dd>
            <dt>Configuration</dt><dd>${run.configuration?.name ?? '—'}</dd>
            <dt>User</dt><dd>${run.user?.name ?? '—'}</dd>
            <dt>Started</dt><dd>${formatTime(run.createdAt)}</dd>
            <dt>Finished</dt><dd>${formatTime(run.finishedAt)}</dd>
            <dt>Iterations</dt><dd>${run.iterations ?? '—'}</dd>
            <dt>Usage</dt><dd id="run-usage">${run.usage ? `${run.usage.promptTokens} prompt + ${run.usage.completionTokens} completion tokens · ${formatCost(run.usage.estimatedCost)}` : '—'}</dd>
          </dl>
          ${!viewer.isAdmin && run.privacyLevel ? html`<p class="privacy" id="privacy-note">${PRIVACY_NOTE[run.privacyLevel] ?? `Privacy level ${run.privacyLevel}.`}</p>` : null}
          ${run.kind === 'MCP' ? null : html`<h3>Prompt</h3>
          ${run.prompt !== null && run.prompt !== undefined ? html`<pre id="run-prompt">${run.prompt}</pre>` : html`<${Hidden} what="Prompt" level=${run.privacyLevel} />`}`}
          ${run.finalContent
            ? html`<h3 id="run-final-heading">${run.status === 'CANCELLED' ? 'Partial answer (the run was cancelled)' : 'Final answer'}</h3><pre id="run-final">${run.finalContent}</pre>`
            : null}
          ${run.errorMessage ? html`<p class="error">${run.errorMessage}</p>` : null}
          ${inFlight ? html`<button type="button" id="cancel-run" onClick=${cancel}>Cancel run</button>` : null}
        </section>`
      : null}
    ${suspended
      ? html`<section class="suspended" aria-labelledby="waiting"><h2 id="waiting">Waiting for approval</h2>
          <p>${suspended.pendingCalls.length} write(s) wait for a decision. Decide them in <a href="#/approvals">Approvals</a>.</p>
          <ul>${suspended.pendingCalls.map((call) => html`<li><code>${call.name}</code>${call.preview ? html`<pre>${call.preview}</pre>` : null}</li>`)}</ul>
        </section>`
      : null}
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      ${steps.length === 0 ? html`<p class="empty">No steps yet: they appear here as the run makes them.</p>` : null}
      <ol class="steps" id="steps" aria-live="polite">${steps.map((step) => html`<${Step} key=${step.sequence} step=${step} level=${run?.privacyLevel} />`)}</ol>
    </section>
  `;
}

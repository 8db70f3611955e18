import { useState } from 'preact/hooks';
import { Hidden, Step, type StepData } from '../components/step.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Timeline } from '../components/timeline.tsx';
import { CANCEL_RUN, RUN, RUN_EVENTS } from '../documents.ts';
import { formatCost, formatTime, shortRunId } from '../format.ts';
import type { ConsoleRunEventsSubscription, ConsoleRunQuery, PrivacyLevel, ResumeReason } from '../gql/graphql.ts';
import { useMutation } from '../hooks/use-mutation.ts';
import { useQuery } from '../hooks/use-query.ts';
import { useSession } from '../hooks/use-session.ts';
import { useSubscription } from '../hooks/use-subscription.ts';

type RunEvent = ConsoleRunEventsSubscription['runEvents'];
type Suspended = Extract<RunEvent, { __typename: 'RunSuspendedEvent' }>;
/** The run as the query read it, updated field by field by the events that followed. */
type RunView = Partial<NonNullable<ConsoleRunQuery['run']>>;

const PRIVACY_NOTE: Record<PrivacyLevel, string> = {
  FULL: 'Privacy level FULL: this copy is verbatim; nothing is hidden.',
  REDACTED: 'Privacy level REDACTED: secret shapes and e-mail addresses are masked and every string is capped at 2 000 characters in this copy.',
  METADATA: 'Privacy level METADATA: prompts, model answers, tool arguments and tool output are not kept; you see names, sizes, tokens, cost and timings only.',
  NONE: 'Privacy level NONE: no content is kept; you see names, sizes, tokens, cost and timings only.',
};

/** What a RunResumedEvent's reason means for an operator watching the run. */
const RESUMED: Record<ResumeReason, string> = {
  LEASE_EXPIRED: 'The server running this run stopped answering, and another took it over',
  HANDED_OVER: 'The server running this run was stopped, and handed it over to another',
  RESTARTED: 'The server was restarted and continued this run',
};

/** The heading's prompt: its first line, cut to a glance. */
const PROMPT_GLANCE = 60;

const inFlight = (status: string | undefined) => status === 'RUNNING' || status === 'WAITING_FOR_APPROVAL';

interface Totals {
  readonly iterations: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cost: number;
  /** True once the figures are the run's own (it has finished); until then they are the steps' sum. */
  readonly exact: boolean;
}

/**
 * The summary's figures. A settled run's are its own (RunFinishedEvent sets them exactly). While
 * it runs they grow with its steps: tokens and cost summed over its LLM steps, iterations the
 * latest round the model answered; never below what the query read (the steps may still be
 * replaying when it answered).
 */
export function liveTotals(run: RunView, steps: readonly StepData[]): Totals | null {
  const read = run.usage ? { iterations: run.iterations ?? 0, promptTokens: run.usage.promptTokens, completionTokens: run.usage.completionTokens, cost: run.usage.estimatedCost } : null;
  if (read && !inFlight(run.status)) return { ...read, exact: true };
  const answers = steps.filter((step) => step.kind === 'LLM');
  if (!read && answers.length === 0) return null;
  const sum = (pick: (usage: NonNullable<StepData['usage']>) => number) => answers.reduce((total, step) => total + (step.usage ? pick(step.usage) : 0), 0);
  return {
    iterations: Math.max(read?.iterations ?? 0, ...answers.map((step) => step.round)),
    promptTokens: Math.max(read?.promptTokens ?? 0, sum((usage) => usage.promptTokens)),
    completionTokens: Math.max(read?.completionTokens ?? 0, sum((usage) => usage.completionTokens)),
    cost: Math.max(read?.cost ?? 0, sum((usage) => usage.cost)),
    exact: false,
  };
}

/** The heading: "Run" and the short id, then the prompt's start when this copy holds a prompt. */
function Heading({ runId, run }: { runId: string; run: RunView }) {
  const firstLine = run.prompt?.split('\n', 1)[0] ?? '';
  const glance = firstLine.length > PROMPT_GLANCE ? `${firstLine.slice(0, PROMPT_GLANCE)}…` : firstLine;
  return (
    <h1 id="run-heading">
      Run <code>{shortRunId(runId)}</code>
      {glance ? <span class="heading-prompt">{` · ${glance}`}</span> : null}
    </h1>
  );
}

function Summary({ run, steps, isAdmin, onCancel }: { run: RunView; steps: readonly StepData[]; isAdmin: boolean; onCancel: () => void }) {
  const totals = liveTotals(run, steps);
  const soFar = totals && !totals.exact ? ' so far' : '';
  return (
    <section aria-labelledby="run-summary" class="summary">
      <h2 id="run-summary">Summary</h2>
      <dl>
        <dt>Status</dt>
        <dd id="run-status" data-status={run.status}>
          {run.status ? <StatusBadge status={run.status} /> : '—'}
          {run.terminationReason && run.terminationReason !== run.status ? ` (${run.terminationReason})` : ''}
        </dd>
        <dt>Id</dt>
        <dd>
          <code id="run-id">{run.id ?? '—'}</code>
        </dd>
        <dt>Kind</dt>
        <dd id="run-kind">{run.kind === 'MCP' ? 'MCP session (one TOOL step per call of an MCP client)' : 'Agent run'}</dd>
        <dt>Configuration</dt>
        <dd>{run.configuration?.name ?? '—'}</dd>
        <dt>User</dt>
        <dd>{run.user?.name ?? '—'}</dd>
        <dt>Started</dt>
        <dd>{formatTime(run.createdAt)}</dd>
        <dt>Finished</dt>
        <dd>{formatTime(run.finishedAt)}</dd>
        <dt>Iterations</dt>
        <dd id="run-iterations" data-iterations={totals?.iterations}>
          {totals ? `${totals.iterations}${soFar}` : '—'}
        </dd>
        <dt>Usage</dt>
        <dd
          id="run-usage"
          data-exact={totals ? String(totals.exact) : undefined}
          data-prompt-tokens={totals?.promptTokens}
          data-completion-tokens={totals?.completionTokens}
          data-total-tokens={totals ? totals.promptTokens + totals.completionTokens : undefined}
          data-cost={totals?.cost}
        >
          {totals
            ? `${totals.promptTokens} prompt + ${totals.completionTokens} completion = ${totals.promptTokens + totals.completionTokens} tokens${soFar} · ${formatCost(totals.cost)}`
            : '—'}
        </dd>
      </dl>
      {!isAdmin && run.privacyLevel ? (
        <p class="privacy" id="privacy-note">
          {PRIVACY_NOTE[run.privacyLevel] ?? `Privacy level ${run.privacyLevel}.`}
        </p>
      ) : null}
      {run.kind === 'MCP' ? null : (
        <>
          <h3>Prompt</h3>
          {run.prompt !== null && run.prompt !== undefined ? <pre id="run-prompt">{run.prompt}</pre> : <Hidden what="Prompt" level={run.privacyLevel} />}
        </>
      )}
      {run.finalContent ? (
        <>
          <h3 id="run-final-heading">{run.status === 'CANCELLED' ? 'Partial answer (the run was cancelled)' : 'Final answer'}</h3>
          <pre id="run-final">{run.finalContent}</pre>
        </>
      ) : null}
      {run.errorMessage ? <p class="error">{run.errorMessage}</p> : null}
      {inFlight(run.status) ? (
        <button type="button" id="cancel-run" onClick={onCancel}>
          Cancel run
        </button>
      ) : null}
    </section>
  );
}

function Waiting({ suspended }: { suspended: Suspended }) {
  return (
    <section class="suspended" aria-labelledby="waiting">
      <h2 id="waiting">Waiting for approval</h2>
      <p>
        {suspended.pendingCalls.length} write(s) wait for a decision. Decide them in <a href="#/approvals">Approvals</a>.
      </p>
      <ul>
        {suspended.pendingCalls.map((call) => (
          <li key={call.id}>
            <code>{call.name}</code>
            {call.preview ? <pre>{call.preview}</pre> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One run: its summary (live while it runs), its timeline, then every step as `runEvents` replays and streams them. */
export function InspectorPage({ runId }: { runId: string }) {
  const { viewer } = useSession();
  const query = useQuery(RUN, { id: runId });
  const [patch, setPatch] = useState<RunView>({});
  const [steps, setSteps] = useState<StepData[]>([]);
  const [suspended, setSuspended] = useState<Suspended | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const cancelRun = useMutation(CANCEL_RUN);
  const [refusal, setRefusal] = useState<string | null>(null);

  const stream = useSubscription(RUN_EVENTS, { runId }, ({ runEvents: event }) => {
    if (event.__typename === 'RunStepEvent') {
      // The replay and the live stream never repeat a step; a reconnect might: keep one per sequence.
      setSteps((current) => (current.some((s) => s.sequence === event.step.sequence) ? current : [...current, event.step].sort((a, b) => a.sequence - b.sequence)));
      setSuspended(null);
      return;
    }
    setPatch((current) => ({ ...current, ...event.run }));
    if (event.__typename === 'RunSuspendedEvent') setSuspended(event);
    if (event.__typename === 'RunFinishedEvent') setSuspended(null);
    if (event.__typename === 'RunResumedEvent') setNotice(`${RESUMED[event.reason] ?? 'Taken over by another server'}; it goes on from step ${event.fromSequence}.`);
  });

  const cancel = async () => {
    const data = await cancelRun.mutate({ id: runId });
    if (data?.cancelRun.__typename === 'Run') setNotice('Cancel requested: the run stops at its next step boundary.');
    else if (data) setRefusal(data.cancelRun.message);
  };

  const missing = query.data !== null && query.data.run === null;
  const run: RunView = { ...(query.data?.run ?? {}), ...patch };
  const error = query.error ?? stream.error ?? cancelRun.error ?? refusal;
  return (
    <>
      <Heading runId={runId} run={run} />
      <p>
        <a href="#/runs">Back to runs</a>
      </p>
      {missing ? (
        <p role="alert" class="error" id="run-missing">
          No run with this id is visible to you. Go back to the runs list.
        </p>
      ) : null}
      {error && !missing ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
      {run.status ? <Summary run={run} steps={steps} isAdmin={viewer.isAdmin} onCancel={() => void cancel()} /> : null}
      {suspended ? <Waiting suspended={suspended} /> : null}
      <Timeline steps={steps} />
      <section aria-labelledby="steps-heading">
        <h2 id="steps-heading">Steps</h2>
        {steps.length === 0 ? <p class="empty">No steps yet: they appear here as the run makes them.</p> : null}
        <ol class="steps" id="steps" aria-live="polite">
          {steps.map((step) => (
            <Step key={step.sequence} step={step} level={run.privacyLevel} />
          ))}
        </ol>
      </section>
    </>
  );
}

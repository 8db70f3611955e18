import type { ComponentChildren } from 'preact';
import { formatCost, formatTime, pretty } from '../format.ts';
import type { ConsoleRunEventsSubscription, PrivacyLevel } from '../gql/graphql.ts';
import { Artifact } from './artifact.tsx';

type StepEvent = Extract<ConsoleRunEventsSubscription['runEvents'], { __typename: 'RunStepEvent' }>;
/** One step of a run as `runEvents` replays and streams it. */
export type StepData = StepEvent['step'];

/** A message of `messagesSent` (JSON on the wire): the runtime's ChatMessage, read defensively. */
interface SentMessage {
  readonly role?: string;
  readonly content?: unknown;
  readonly toolName?: string;
  readonly isError?: boolean;
  readonly toolCalls?: readonly unknown[];
}

const present = <T,>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/**
 * What this copy leaves out. Shown only where a field is absent, which the API does only when the
 * run's privacy level did not keep it; the note names that level.
 */
export function Hidden({ what, level }: { what: string; level: PrivacyLevel | null | undefined }) {
  return (
    <p class="hidden-note">
      {what} not shown (privacy level {level ?? 'of this run'}).
    </p>
  );
}

/** The messages a REQUEST step sent, one per turn: system, user, assistant (with its calls), tool. */
function Messages({ messages }: { messages: readonly unknown[] }) {
  return (
    <ol class="messages">
      {messages.map((item, index) => {
        const message = (typeof item === 'object' && item !== null ? item : {}) as SentMessage;
        const role = message.role ?? 'unknown';
        return (
          <li key={index} class={`message message-${role}`} data-role={role}>
            <h4>
              {message.role ?? 'message'}
              {role === 'tool' && message.toolName ? (
                <>
                  {' · '}
                  <code>{message.toolName}</code>
                </>
              ) : null}
              {message.isError ? ' (error)' : null}
            </h4>
            {typeof message.content === 'string' ? <pre class="message-content">{message.content}</pre> : <pre>{pretty(item)}</pre>}
            {message.toolCalls?.length ? (
              <details>
                <summary>Tool calls ({message.toolCalls.length})</summary>
                <pre>{pretty(message.toolCalls)}</pre>
              </details>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

function LlmBody({ step, level }: { step: StepData; level: PrivacyLevel | null | undefined }) {
  const calls = Array.isArray(step.requestedToolCalls) ? step.requestedToolCalls : [];
  return (
    <>
      {!present(step.content) ? (
        <Hidden what={`Model answer (${step.contentLength ?? 0} characters)`} level={level} />
      ) : step.content === '' ? (
        <p class="empty">No text in this answer.</p>
      ) : (
        <>
          <h4>Model answer</h4>
          <pre class="content">{step.content}</pre>
        </>
      )}
      {step.thinking ? (
        <details>
          <summary>Thinking</summary>
          <pre>{step.thinking}</pre>
        </details>
      ) : null}
      {step.requestedToolNames?.length ? <p>Tool calls: {step.requestedToolNames.join(', ')}</p> : null}
      {calls.length ? (
        <details>
          <summary>Tool calls requested</summary>
          <pre>{pretty(calls)}</pre>
        </details>
      ) : null}
    </>
  );
}

function ToolBody({ step, level }: { step: StepData; level: PrivacyLevel | null | undefined }) {
  let outcome: ComponentChildren = null;
  if (step.outcomeUnknown)
    outcome = (
      <>
        {' '}
        <strong class="error-text">outcome unknown</strong>: it was running when its server stopped, and was not run again
      </>
    );
  else if (step.toolIsError)
    outcome = (
      <>
        {' '}
        <strong class="error-text">returned an error</strong>
      </>
    );
  let artifacts: ComponentChildren = null;
  if (step.artifacts?.length)
    artifacts = (
      <>
        <h4>Artifacts</h4>
        {step.artifacts.map((artifact, index) => (
          <Artifact key={index} artifact={artifact} />
        ))}
      </>
    );
  else if (step.toolArtifactsCount)
    artifacts = <Hidden what={`${step.toolArtifactsCount} artifact(s) of type ${(step.toolArtifactTypes ?? []).join(', ')}`} level={level} />;
  return (
    <>
      <p>
        Tool <code>{step.toolName ?? '?'}</code>
        {outcome}
      </p>
      {present(step.toolArguments) ? (
        <details>
          <summary>Arguments</summary>
          <pre>{pretty(step.toolArguments)}</pre>
        </details>
      ) : null}
      {present(step.toolResult) ? (
        <>
          <h4>What the model received</h4>
          <pre class="tool-result">{step.toolResult}</pre>
        </>
      ) : (
        <Hidden what={`Tool output (${step.toolResultLength ?? 0} characters)`} level={level} />
      )}
      {artifacts}
    </>
  );
}

function StepBody({ step, level }: { step: StepData; level: PrivacyLevel | null | undefined }) {
  switch (step.kind) {
    case 'LLM':
      return <LlmBody step={step} level={level} />;
    case 'TOOL':
      return <ToolBody step={step} level={level} />;
    case 'APPROVAL':
      return step.approval ? (
        <p>
          {step.approval.approved ? 'Approved' : 'Denied'} by {step.approval.approverName} at {formatTime(step.approval.decidedAt)}
        </p>
      ) : (
        <p>Approval step</p>
      );
    case 'REQUEST':
      return Array.isArray(step.messagesSent) ? (
        <details open>
          <summary>Messages sent ({step.messagesSent.length})</summary>
          <Messages messages={step.messagesSent} />
        </details>
      ) : (
        <Hidden what={`Messages sent (${step.messagesSentCount ?? 0})`} level={level} />
      );
    default:
      // A kind this build does not know: its text if any, never an error.
      return present(step.content) ? <pre class="content">{step.content}</pre> : null;
  }
}

/** One step of any kind, with its usage (LLM steps); `level` is the run's privacy level. */
export function Step({ step, level }: { step: StepData; level: PrivacyLevel | null | undefined }) {
  return (
    <li class={`step step-${step.kind.toLowerCase()}`} data-sequence={step.sequence} data-kind={step.kind}>
      <h3>
        Step {step.sequence} · {step.kind} · round {step.round}
      </h3>
      <StepBody step={step} level={level} />
      {step.usage ? (
        <p class="usage">
          Tokens {step.usage.promptTokens} in / {step.usage.completionTokens} out · {formatCost(step.usage.cost)}
        </p>
      ) : null}
    </li>
  );
}

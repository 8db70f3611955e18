import { offeredTools } from '../access/gate.ts';
import { ProviderError, type Completion } from './llm.ts';
import { suspensionFor, type ApprovalDecision, type LoopState, type Suspension } from './approval.ts';
import { Cancelled, LoopHandedOver, stateOf, type LoopInput, type Session } from './loop-session.ts';
import { callProvider } from './provider-call.ts';
import type { ResumePoint } from './resume-point.ts';
import type { RunOutcome, TerminationReason } from './run.ts';
import { runToolCalls } from './tool-turn.ts';
import { ZERO_USAGE } from './usage.ts';

/**
 * The bounded agent loop of DESIGN.md section 5. Plain async function: no GraphQL, no SQL; steps go
 * to `onStep`, the store and the stream are the caller's business. A turn that calls an offered
 * write tool suspends BEFORE any call of the turn runs (status WAITING_FOR_APPROVAL); `resumeLoop`
 * continues it once a person decided, `continueLoop` once another process took the run over.
 */
export async function runLoop(input: LoopInput): Promise<RunOutcome> {
  const messages: LoopState['messages'][number][] = [];
  if (input.settings.systemPrompt.trim() !== '') messages.push({ role: 'system', content: input.settings.systemPrompt });
  messages.push({ role: 'user', content: input.prompt });
  const session = openSession(input, { messages, iterations: 0, usage: ZERO_USAGE, lastContent: null, deniedTurns: 0 });
  return guarded(session, () => (session.specs === null ? plainAnswer(session) : rounds(session, 1)));
}

/**
 * Continues a suspended run: the pending calls run (approved) or are refused (denied), every call
 * re-checked against the CURRENT switches, then the loop goes on with its counters and usage.
 * A run with a denied turn that the model then answers around ends `COMPLETED` with the reason
 * `APPROVAL_DENIED` (a reason that says why it stopped, budget or cap, wins over it).
 */
export async function resumeLoop(input: LoopInput, suspension: Suspension, decision: ApprovalDecision): Promise<RunOutcome> {
  const session = openSession(input, suspension.state);
  if (!decision.approved) session.deniedTurns += 1;
  return guarded(session, async () => {
    await runToolCalls(session, suspension.round, suspension.calls, decision.approved ? 'approved' : 'denied');
    return afterTools(session, suspension.round);
  });
}

/**
 * Continues a run from the last resume point its previous process stored (a takeover): a call in
 * flight is made again, an answer already stored is not asked for again, and a turn goes on as
 * `runToolCalls` describes (a started write never runs twice).
 */
export async function continueLoop(input: LoopInput, point: ResumePoint): Promise<RunOutcome> {
  const session = openSession(input, point.state);
  return guarded(session, async () => {
    switch (point.at) {
      case 'call':
        return session.specs === null ? plainAnswer(session) : rounds(session, point.round);
      case 'answered':
        session.lastContent = point.answer.content;
        return answered(session, point.round, { content: point.answer.content, toolCalls: point.answer.toolCalls });
      case 'tools':
        await runToolCalls(session, point.round, point.calls, point.mode, point);
        return afterTools(session, point.round);
    }
  });
}

function openSession(input: LoopInput, state: LoopState): Session {
  const offered = offeredTools(input.gate).map((tool) => tool.name);
  return {
    input,
    specs: offered.length > 0 ? input.registry.specs(offered) : null,
    messages: [...state.messages],
    usage: state.usage,
    iterations: state.iterations,
    lastContent: state.lastContent,
    deniedTurns: state.deniedTurns ?? 0,
    remoteToolCalls: state.remoteToolCalls ?? 0,
    pointed: false,
  };
}

function finish(
  session: Session,
  status: RunOutcome['status'],
  terminationReason: TerminationReason | null,
  extra: { truncated?: boolean; finalContent?: string | null; errorMessage?: string | null; suspension?: Suspension } = {},
): RunOutcome {
  return {
    status,
    terminationReason: terminationReason === 'COMPLETED' && session.deniedTurns > 0 ? 'APPROVAL_DENIED' : terminationReason,
    truncated: extra.truncated ?? false,
    iterations: session.iterations,
    finalContent: extra.finalContent === undefined ? session.lastContent : extra.finalContent,
    usage: session.usage,
    errorMessage: extra.errorMessage ?? null,
    ...(extra.suspension ? { suspension: extra.suspension } : {}),
  };
}

const BUDGET_DENIED = 'The budget does not allow another provider call.';

/** Maps cancellation and provider failures to their outcomes; a handover and anything else (a bug) propagate. */
async function guarded(session: Session, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const { input } = session;
  try {
    return await body();
  } catch (error) {
    if (error instanceof LoopHandedOver) throw error;
    if (error instanceof Cancelled || input.signal.aborted) return finish(session, 'CANCELLED', 'CANCELLED');
    if (error instanceof ProviderError) {
      input.logger.error({ err: error, runId: input.runId, status: error.status, kind: error.kind }, 'provider call failed');
      return finish(session, 'FAILED', 'PROVIDER_FAILED', { errorMessage: 'The model provider failed to answer; see the server log.' });
    }
    throw error;
  }
}

/** No tools offered: ONE plain completion, with no tools field on the wire. */
async function plainAnswer(session: Session): Promise<RunOutcome> {
  const completion = await callProvider(session, 1, null);
  if (!completion) return finish(session, 'FAILED', 'BUDGET_EXHAUSTED', { errorMessage: BUDGET_DENIED });
  return answered(session, 1, completion);
}

/** Round `round` and the rest of the run; past the cap, the synthesis. */
async function rounds(session: Session, round: number): Promise<RunOutcome> {
  if (round > session.input.settings.maxIterations) return synthesise(session);
  const completion = await callProvider(session, round, session.specs);
  if (!completion) {
    return session.iterations === 0
      ? finish(session, 'FAILED', 'BUDGET_EXHAUSTED', { errorMessage: BUDGET_DENIED })
      : finish(session, 'COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
  }
  return answered(session, round, completion);
}

/**
 * What follows an answer of `round`: the final answer (a plain completion, a round without tool
 * calls, or the synthesis past the cap), a suspension before a write turn, or the turn's calls
 * and the rest of the run.
 */
async function answered(session: Session, round: number, completion: Pick<Completion, 'content' | 'toolCalls'>): Promise<RunOutcome> {
  const { input } = session;
  if (round > input.settings.maxIterations) return finish(session, 'COMPLETED', 'MAX_ITERATIONS', { truncated: true, finalContent: completion.content });
  session.iterations = round;
  if (session.specs === null || completion.toolCalls.length === 0) return finish(session, 'COMPLETED', 'COMPLETED', { finalContent: completion.content });
  session.messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
  const suspension = await suspensionFor(input, stateOf(session), round, completion.toolCalls);
  if (suspension) return finish(session, 'WAITING_FOR_APPROVAL', null, { suspension });
  await runToolCalls(session, round, completion.toolCalls, 'run');
  return afterTools(session, round);
}

/** After a turn's calls: the next round, or the synthesis when the cap is reached. */
const afterTools = (session: Session, round: number): Promise<RunOutcome> => rounds(session, round + 1);

/** The cap was reached with tool results pending: one plain completion, WITHOUT tools, answers. */
async function synthesise(session: Session): Promise<RunOutcome> {
  const synthesis = await callProvider(session, session.input.settings.maxIterations + 1, null);
  if (!synthesis) return finish(session, 'COMPLETED', 'BUDGET_EXHAUSTED', { truncated: true });
  return answered(session, session.input.settings.maxIterations + 1, synthesis);
}

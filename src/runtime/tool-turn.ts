import { checkGate } from '../access/gate.ts';
import { invokeTool, type ToolOutcome } from './tool-seam.ts';
import type { ToolCall } from './llm.ts';
import { atBoundary, Cancelled, DEFAULT_MAX_REMOTE_TOOL_CALLS, durable, stateOf, type Session } from './loop-session.ts';
import { interruptedOutcomeError, type ResumePoint, type ToolResultSoFar, type ToolTurnMode } from './resume-point.ts';

/** Where a turn taken over from another process stood (its `tools` resume point). */
export interface TurnSoFar {
  readonly done: readonly ToolResultSoFar[];
  readonly started: readonly string[];
  readonly remoteBudgetSpent?: readonly boolean[];
}

/**
 * Runs one turn's calls concurrently; appends their results (content only) in call order. After an
 * approval every call is re-checked against the current switches first; after a denial none runs.
 * Every call, refusals included, passes the one seam that bounds what the model receives.
 *
 * Durable runs: a call that must not run twice (a write, which needed approval) is recorded as
 * started, and that record is STORED before it runs; its result, and the turn's last, carry a
 * resume point. A turn taken over (`soFar`) does not run its
 * recorded calls again, runs its read calls again, and never runs a started write again: the model
 * receives the exact interrupted-outcome error and the TOOL step says `outcomeUnknown`.
 */
export async function runToolCalls(session: Session, round: number, calls: readonly ToolCall[], mode: ToolTurnMode, soFar?: TurnSoFar): Promise<void> {
  const { input } = session;
  atBoundary(session);
  const remoteBudgetSpent = soFar?.remoteBudgetSpent ?? spendRemoteBudget(session, calls, mode);
  const state = stateOf(session);
  const done = new Map((soFar?.done ?? []).map((result) => [result.callId, result]));
  const started = new Set(soFar?.started ?? []);
  const pointWith = (results: readonly ToolResultSoFar[], startedIds: readonly string[]): ResumePoint => ({
    at: 'tools',
    round,
    state,
    calls,
    mode,
    done: results,
    started: startedIds,
    remoteBudgetSpent,
  });
  const mustNotRepeat = (call: ToolCall) => {
    if (mode === 'denied') return false;
    const decision = checkGate(input.gate, call.name);
    return decision.allowed && decision.tool.effect === 'write';
  };
  const starting = calls.filter((call) => !done.has(call.id) && !started.has(call.id) && mustNotRepeat(call));
  if (input.checkpoint && starting.length > 0) {
    await input.checkpoint(pointWith([...done.values()], [...started, ...starting.map((call) => call.id)]));
  }
  const startedIds = [...started, ...starting.map((call) => call.id)];
  const outcomes = await Promise.all(
    calls.map((call, index): Promise<ToolOutcome & { outcomeUnknown?: true }> | null => {
      if (done.has(call.id)) return null;
      if (started.has(call.id)) return Promise.resolve({ content: interruptedOutcomeError(call.name), isError: true, artifacts: [], durationMs: 0, outcomeUnknown: true });
      return invokeTool(call, {
        remoteBudgetSpent: remoteBudgetSpent[index]!,
        gate: input.gate,
        logger: input.logger,
        quarantine: input.settings.quarantineToolOutput,
        truncation: input.settings.truncation,
        ...(input.settings.toolTimeoutMs === undefined ? {} : { timeoutMs: input.settings.toolTimeoutMs }),
        ...(mode === 'run' ? {} : { approval: mode }),
        ...(input.observer ? { observer: input.observer } : {}),
        ...(input.spanContent ? { spanContent: input.spanContent } : {}),
        context: { actor: input.gate.actor, signal: input.signal, runId: input.runId, data: input.toolData },
      });
    }),
  );
  const results: ToolResultSoFar[] = [...done.values()];
  /** The last call this pass records: its step completes the turn. */
  const lastRecorded = calls.findLastIndex((call) => !done.has(call.id));
  for (const [index, call] of calls.entries()) {
    const recorded = done.get(call.id);
    if (recorded) {
      session.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: recorded.content, isError: recorded.isError });
      continue;
    }
    const outcome = outcomes[index]!;
    session.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: outcome.content, isError: outcome.isError });
    results.push({ callId: call.id, content: outcome.content, isError: outcome.isError });
    // A point with the turn's last result, and with the result of each call that must not run twice
    // (a read recorded in between is simply run again: a point costs the whole transcript sealed).
    // A result of a cancelled call is stored for the audit, but no process resumes from it.
    const pointHere = index === lastRecorded || startedIds.includes(call.id);
    const point = pointHere && durable(session) && !input.signal.aborted ? pointWith([...results], startedIds) : undefined;
    await input.onStep(
      {
        kind: 'TOOL',
        round,
        toolCallId: call.id,
        toolName: call.name,
        toolArguments: call.arguments,
        toolResult: outcome.content,
        toolIsError: outcome.isError,
        artifacts: outcome.artifacts,
        durationMs: outcome.durationMs,
        ...(outcome.outcomeUnknown ? { outcomeUnknown: true } : {}),
      },
      point,
    );
  }
  if (input.signal.aborted) throw new Cancelled();
}

/**
 * Which calls of the turn the run's budget of remote calls refuses: counted in call order before
 * the turn runs concurrently, so the first calls within budget run.
 */
function spendRemoteBudget(session: Session, calls: readonly ToolCall[], mode: ToolTurnMode): boolean[] {
  const budget = session.input.settings.maxRemoteToolCalls ?? DEFAULT_MAX_REMOTE_TOOL_CALLS;
  return calls.map((call) => {
    if (mode === 'denied') return false;
    const decision = checkGate(session.input.gate, call.name);
    if (!decision.allowed || decision.tool.untrusted !== true) return false;
    if (session.remoteToolCalls >= budget) return true;
    session.remoteToolCalls += 1;
    return false;
  });
}

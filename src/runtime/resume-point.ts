import type { LoopState } from './approval.ts';
import type { ToolCall } from './llm.ts';

/**
 * Where a run can be continued from after its process died (durable runs, DESIGN.md section 8c):
 * the loop hands one over with each step that reaches a new boundary, and the service seals it with
 * that step's write. Content only (the transcript the model has seen); artifacts never enter it.
 *
 * - `call`: the provider is to be called for `round` (a round past the iteration cap is the
 *   synthesis without tools). The call may have been in flight: it is made again.
 * - `answered`: the provider answered `round` (its usage is in `state.usage`); what follows is
 *   decided as if the answer had just arrived, so an answer is never asked for twice.
 * - `tools`: the calls of `round` run; `done` holds the results already recorded, `started` the
 *   calls that must not run twice (writes) and were about to run. On resume a call in `done` is not
 *   run again, a read call not in `done` is, and a started write becomes `outcomeUnknown`.
 */
export type ResumePoint =
  | { readonly at: 'call'; readonly round: number; readonly state: LoopState }
  | {
      readonly at: 'answered';
      readonly round: number;
      readonly state: LoopState;
      readonly answer: { readonly content: string; readonly toolCalls: readonly ToolCall[] };
    }
  | {
      readonly at: 'tools';
      readonly round: number;
      /** The transcript up to and including the assistant message that asked for `calls`. */
      readonly state: LoopState;
      readonly calls: readonly ToolCall[];
      readonly mode: ToolTurnMode;
      readonly done: readonly ToolResultSoFar[];
      readonly started: readonly string[];
      /**
       * Per call: refused because the run's budget of remote calls was spent (counted once, when
       * the turn began); absent when the turn has not begun (a decision claimed, nothing run yet).
       */
      readonly remoteBudgetSpent?: readonly boolean[];
    };

/** How a turn's calls run: as the model asked, after a person approved them, or refused after a denial. */
export type ToolTurnMode = 'run' | 'approved' | 'denied';

/** A call of the turn whose result is recorded: exactly what the model receives. */
export interface ToolResultSoFar {
  readonly callId: string;
  readonly content: string;
  readonly isError: boolean;
}

/**
 * What the model receives for a call that must not run twice and was running when its process
 * died (DESIGN.md section 8c): the tool is never called again.
 */
export function interruptedOutcomeError(toolName: string): string {
  return `Error: tool "${toolName}" was interrupted: outcome unknown. Check before trying again.`;
}

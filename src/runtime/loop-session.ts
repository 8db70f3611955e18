import type { ToolSpec } from '../tools/tool.ts';
import type { LoopState } from './approval.ts';
import type { ChatMessage } from './llm.ts';
import type { LoopInput } from './loop.ts';
import type { PricedUsage } from './usage.ts';

/** Calls of remote (`untrusted`) tools one run may make when its settings do not say. */
export const DEFAULT_MAX_REMOTE_TOOL_CALLS = 20;

/** The loop was cancelled (its signal): the run ends CANCELLED. */
export class Cancelled extends Error {}

/**
 * The process hands the run over (`LoopInput.handover`): the loop stopped at a step boundary, with
 * every resume point up to it handed to `onStep`, so another process can continue the run. Thrown
 * out of the loop; the caller settles nothing.
 */
export class LoopHandedOver extends Error {
  constructor() {
    super('the run was handed over at a step boundary');
  }
}

/** The mutable progress of one run, shared by the first pass and every resume. */
export interface Session {
  readonly input: LoopInput;
  readonly specs: ToolSpec[] | null;
  messages: ChatMessage[];
  usage: PricedUsage;
  iterations: number;
  lastContent: string | null;
  deniedTurns: number;
  remoteToolCalls: number;
  /** A resume point was handed over in this pass (the first REQUEST step carries one; later ones need not). */
  pointed: boolean;
}

/** The session's progress as a resume point (and a suspension) stores it: a copy, later pushes do not change it. */
export function stateOf(session: Session): LoopState {
  return {
    messages: [...session.messages],
    iterations: session.iterations,
    usage: session.usage,
    lastContent: session.lastContent,
    deniedTurns: session.deniedTurns,
    remoteToolCalls: session.remoteToolCalls,
  };
}

/** Whether the run is durable: resume points are built only for a caller that stores them. */
export const durable = (session: Session): boolean => session.input.checkpoint !== undefined;

/** At a step boundary: stop for a cancellation, or for a handover. */
export function atBoundary(session: Session): void {
  if (session.input.signal.aborted) throw new Cancelled();
  if (session.input.handover?.aborted) throw new LoopHandedOver();
}

import { randomUUID } from 'node:crypto';
import { decide, offeredTools, toolFailedError } from '../access/gate.ts';
import type { ConfigurationRow, Db, RunRow } from '../db/database.ts';
import type { RunWriter } from '../db/run-batch-writer.ts';
import { createRunRepository } from '../db/run-repository.ts';
import { loadRunSetup } from '../db/repositories/run-setup.ts';
import * as runs from '../db/repositories/runs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RunEventBus } from '../runtime/events.ts';
import { invokeTool, type ToolOutcome } from '../runtime/invoke.ts';
import { filterRunContent } from '../runtime/privacy.ts';
import { createRunRecorder } from '../runtime/run-recorder.ts';
import type { RunOutcome } from '../runtime/run.ts';
import { spanContentFor } from '../runtime/telemetry.ts';
import { ZERO_USAGE } from '../runtime/usage.ts';
import { createBudgetGuard } from '../services/budget-guard.ts';
import { configurationView, gateInputFor } from '../services/tool-access.ts';
import type { ToolData } from '../tools/data.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Actor } from '../tools/tool.ts';

/** What a session reads and writes: the tools, the database, the run writer and the bus. */
export interface McpSessionDeps {
  readonly db: Db;
  readonly registry: ToolRegistry;
  readonly toolData: ToolData;
  readonly writer: RunWriter;
  readonly bus: RunEventBus<RunRow>;
  readonly logger: Logger;
  readonly config: { readonly toolTimeoutMs: number };
  /** Tool calls over MCP count in the same metrics as the loop's (absent in unit set-ups). */
  readonly metrics?: Pick<Metrics, 'observerFor'>;
}

/** A tool as `tools/list` describes it (MCP `Tool`): its JSON Schema is the one providers get. */
export interface McpToolDescription {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: { readOnlyHint: boolean };
}

/** A `tools/call` result: the model-facing string only; artifacts never leave over MCP. */
export interface McpCallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError: boolean;
}

/**
 * Why a session ended, and so how its run is settled. SETTLED: its run was settled elsewhere (the
 * session cap closed it, on this instance or another, or the stale-heartbeat sweep did): nothing
 * more is stored but the steps of the calls it abandons.
 */
export const SESSION_ENDS = ['CLOSED', 'IDLE', 'CANCELLED', 'STOPPED', 'NOT_OPENED', 'SETTLED'] as const;
export type SessionEnd = (typeof SESSION_ENDS)[number];

export interface McpSession {
  readonly run: RunRow;
  readonly userId: string;
  /** Updated at every request: the token is checked anew each time (an admin demoted meanwhile is no longer one). */
  actor: Actor;
  listTools(): Promise<McpToolDescription[]>;
  /** Never throws: every refusal or failure is a tool error with a generic string. */
  callTool(name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<McpCallResult>;
  /** Settles the run once (later calls do nothing) and abandons the calls in flight. */
  close(end: SessionEnd): Promise<void>;
}

/** A session opened, and the user's sessions it closed to stay within the cap (their runs settled already). */
export interface OpenedMcpSession {
  readonly session: McpSession;
  readonly closedRunIds: readonly string[];
}

/** A write tool needs a person's approval, which needs a run that can wait: MCP sessions refuse it. */
export function approvalNeedsRunError(name: string): string {
  return `Error: tool "${name}" needs a human approval and was not executed; MCP calls cannot wait for one: use runAgent or startRun.`;
}

/** The call would exceed a request budget of the user or the configuration. */
export function budgetExhaustedError(name: string): string {
  return `Error: tool "${name}" was not executed: a request budget of this user or configuration is exhausted.`;
}

const OUTCOMES: Record<Exclude<SessionEnd, 'SETTLED'>, Pick<RunOutcome, 'status' | 'terminationReason' | 'errorMessage'>> = {
  CLOSED: { status: 'COMPLETED', terminationReason: 'COMPLETED', errorMessage: null },
  IDLE: { status: 'COMPLETED', terminationReason: 'COMPLETED', errorMessage: null },
  CANCELLED: { status: 'CANCELLED', terminationReason: 'CANCELLED', errorMessage: null },
  STOPPED: { status: 'FAILED', terminationReason: 'INTERRUPTED', errorMessage: 'The server stopped while the MCP session was open.' },
  NOT_OPENED: { status: 'CANCELLED', terminationReason: 'CANCELLED', errorMessage: 'The MCP client did not complete the session handshake.' },
};

/**
 * How the session cap settles the sessions it closes: as a session the client closed (the user
 * opened a newer one; the session itself did nothing wrong). No call ran through the loop.
 */
const CLOSED_BY_CAP: runs.Settlement = {
  status: 'COMPLETED',
  terminationReason: 'COMPLETED',
  errorMessage: null,
  truncated: false,
  iterations: 0,
  finalContent: null,
  promptTokens: 0,
  completionTokens: 0,
  estimatedCost: 0,
};

/**
 * Opens one MCP session as one run (`kind: MCP`, RUNNING while the session is open). When its user
 * then has more than `maxSessions` open (0 = no limit), the least recently used others are closed:
 * their runs are settled COMPLETED and announced here, and `closedRunIds` names them for the
 * process that holds them (which also finds out by itself, at their next request or heartbeat).
 * Sessions do not count against the agent-run cap. Every call is recorded as a TOOL step through
 * the run recorder, so the privacy filter, the bus and the group-commit writer apply exactly as
 * for agent runs.
 */
export async function openMcpSession(
  deps: McpSessionDeps,
  actor: Actor,
  configuration: ConfigurationRow,
  options: { readonly maxSessions: number; readonly stopSignal: AbortSignal },
): Promise<OpenedMcpSession> {
  const { db, bus } = deps;
  const level = configuration.privacy_level;
  const row = {
    id: randomUUID(),
    configuration_id: configuration.id,
    user_id: actor.id,
    status: 'RUNNING',
    prompt: filterRunContent(level, { prompt: null, finalContent: null }).prompt,
    privacy_level: level,
    tool_selection: null,
  } as const;
  const { run, closed } = await runs.insertSessionRunClosingLeastRecent(db, row, options.maxSessions, CLOSED_BY_CAP);
  for (const settled of closed) bus.publish({ type: 'finished', runId: settled.id, finalContent: null, run: settled });
  const logger = deps.logger.child({ runId: run.id, component: 'mcp' });
  const recorder = createRunRecorder({ runId: run.id, level, repository: createRunRepository(db, deps.writer), bus, logger, stopSignal: options.stopSignal });
  const controller = new AbortController();
  let calls = 0;
  /** Calls of remote (imported) tools so far: the configuration's `maxRemoteToolCalls` holds per session as per run. */
  let remoteCalls = 0;
  const inFlight = new Set<Promise<McpCallResult>>();
  let closing: Promise<void> | null = null;
  bus.publish({ type: 'started', runId: run.id, run });

  /** The gate of this moment: current switches, configuration, skills and actor (re-read for every request). */
  const currentGate = async (actorNow: Actor) => {
    const setup = await loadRunSetup(db, configuration.id, actorNow.id);
    if (!setup) return null;
    const view = configurationView(db, setup.configuration, setup.skillIds);
    return { setup, gate: await gateInputFor(db, deps.registry, setup.configuration, actorNow, null, { view, state: setup.toolState }) };
  };

  const execute = async (round: number, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> => {
    const started = performance.now();
    const refused = (content: string): ToolOutcome => ({ content, isError: true, artifacts: [], durationMs: performance.now() - started });
    const current = await currentGate(session.actor);
    // The configuration was deleted while the session was open.
    if (!current) return refused(toolFailedError(name));
    const { setup, gate } = current;
    const decision = decide(gate, name);
    if (decision.allowed && decision.tool.effect === 'write') return refused(approvalNeedsRunError(decision.tool.name));
    if (decision.allowed) {
      // One request against the user's and the configuration's budgets (no cost: no model is called).
      const guard = createBudgetGuard(
        { db, writer: deps.writer, logger },
        { userId: session.actor.id, configurationId: setup.configuration.id, modelId: setup.model?.id ?? '', runId: run.id },
        { budgets: setup.budgets },
      );
      const denial = await guard.preflight(0);
      if (denial) {
        logger.warn({ denial }, 'budget pre-flight refused an MCP tool call');
        return refused(budgetExhaustedError(decision.tool.name));
      }
    }
    const remote = decision.allowed && decision.tool.untrusted === true;
    const remoteBudgetSpent = remote && remoteCalls >= setup.configuration.max_remote_tool_calls;
    if (remote && !remoteBudgetSpent) remoteCalls += 1;
    // The one seam: gate again, argument validation, timeout, bounds, sanitising, quarantine.
    return invokeTool(
      { id: `call_${round}`, name, arguments: args },
      {
        gate,
        logger,
        quarantine: setup.configuration.quarantine_tool_output,
        truncation: setup.configuration.truncation,
        timeoutMs: deps.config.toolTimeoutMs,
        remoteBudgetSpent,
        ...(deps.metrics ? { observer: deps.metrics.observerFor(configuration.id) } : {}),
        spanContent: spanContentFor(level),
        context: { actor: session.actor, signal: AbortSignal.any([controller.signal, signal]), runId: run.id, data: deps.toolData },
      },
    );
  };

  const session: McpSession = {
    run,
    userId: actor.id,
    actor,
    async listTools() {
      const current = await currentGate(session.actor);
      if (!current) return [];
      return offeredTools(current.gate).map((tool) => ({
        name: tool.name,
        description: tool.description,
        // MCP wants an object schema; every built-in's parameters are one.
        inputSchema: { ...deps.registry.parametersSchema(tool.name), type: 'object' },
        annotations: { readOnlyHint: tool.effect !== 'write' },
      }));
    },
    callTool(name, args, signal = new AbortController().signal) {
      // A call racing the end of its session runs nothing and records nothing after the run settled.
      if (closing) return Promise.resolve({ content: [{ type: 'text', text: toolFailedError(name) }], isError: true });
      const call = record(name, args, signal);
      inFlight.add(call);
      return call.finally(() => inFlight.delete(call));
    },
    close(end) {
      return (closing ??= (async () => {
        controller.abort();
        // Abandoned calls end at once (their signal is aborted); their steps are stored before the outcome.
        await Promise.allSettled(inFlight);
        if (end === 'SETTLED') return recorder.flushed();
        await recorder.settle({ ...OUTCOMES[end], truncated: false, iterations: 0, finalContent: null, usage: ZERO_USAGE });
      })());
    },
  };

  /** One call: executed (or refused), then recorded as the run's next TOOL step. */
  async function record(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal): Promise<McpCallResult> {
    calls += 1;
    const round = calls;
    let outcome: ToolOutcome;
    try {
      outcome = await execute(round, name, args ?? {}, signal);
    } catch (error) {
      logger.error({ err: error }, 'MCP tool call failed unexpectedly');
      outcome = { content: toolFailedError(name), isError: true, artifacts: [], durationMs: 0 };
    }
    await recorder.recordStep({
      kind: 'TOOL',
      round,
      toolCallId: `call_${round}`,
      toolName: name,
      toolArguments: args ?? {},
      toolResult: outcome.content,
      toolIsError: outcome.isError,
      // Stored with the audit record (privacy-filtered); never part of the MCP result.
      artifacts: outcome.artifacts,
      durationMs: outcome.durationMs,
    });
    return { content: [{ type: 'text', text: outcome.content }], isError: outcome.isError };
  }
  return { session, closedRunIds: closed.map((settled) => settled.id) };
}

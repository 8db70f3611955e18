import { randomUUID } from 'node:crypto';
import { checkGate, offeredTools, toolFailedError } from '../access/gate.ts';
import type { ConfigurationRow, Db, RunRow } from '../db/database.ts';
import type { RunWriter } from '../db/run-batch-writer.ts';
import { insertSessionRunClosingLeastRecent, insertSessionStep, reserveRemoteCall, settleSession, type SessionEnd } from '../db/repositories/mcp-sessions.ts';
import type { Settlement } from '../db/repositories/run-settlement.ts';
import { loadRunSetup } from '../db/repositories/run-setup.ts';
import * as runs from '../db/repositories/runs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RunEventBus } from '../runtime/events.ts';
import { invokeTool, type ToolOutcome } from '../runtime/tool-seam.ts';
import { filterRunContent, filterStep } from '../runtime/privacy.ts';
import { toStoredStep, type StoredStep } from '../runtime/stored-step.ts';
import { spanContentFor } from '../runtime/telemetry.ts';
import { ZERO_USAGE } from '../runtime/usage.ts';
import { createBudgetGuard } from '../services/budget-guard.ts';
import { newRunId } from '../services/run-host/run-id.ts';
import { configurationView, gateInputFor } from '../services/tool-access.ts';
import type { ToolData } from '../tools/data.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Actor } from '../tools/tool.ts';

/** What a session reads and writes: the tools, the database, the run writer (budgets) and the bus. */
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
 * One request's view of a session: the session is its run row (src/db/repositories/mcp-sessions.ts),
 * so nothing here outlives the request, and any instance builds the same view from the row.
 */
export interface McpSessionRequest {
  listTools(): Promise<McpToolDescription[]>;
  /** Never throws: every refusal or failure is a tool error with a generic string. */
  callTool(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal): Promise<McpCallResult>;
}

/** A write tool needs a person's approval, which needs a run that can wait: MCP sessions refuse it. */
export function approvalNeedsRunError(name: string): string {
  return `Error: tool "${name}" needs a human approval and was not executed; MCP calls cannot wait for one: use runAgent or startRun.`;
}

/** The call would exceed a request budget of the user or the configuration. */
export function budgetExhaustedError(name: string): string {
  return `Error: tool "${name}" was not executed: a request budget of this user or configuration is exhausted.`;
}

/**
 * How the session cap settles the sessions it closes: as a session the client closed (the user
 * opened a newer one; the session itself did nothing wrong). No call ran through the loop.
 */
const CLOSED_BY_CAP: Settlement = {
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

/** Tells watchers (runEvents, runUpdates, the console) on every instance that these sessions ended. */
export function announceEnded(bus: RunEventBus<RunRow>, settled: readonly RunRow[]): void {
  for (const run of settled) bus.publish({ type: 'finished', runId: run.id, finalContent: null, run });
}

/**
 * Opens one MCP session as one run (`kind: MCP`, RUNNING while the session is open); the run's
 * id is the session id (`Mcp-Session-Id`: a random UUID, and only its user's token can use it).
 * When its user then has more than `maxSessions` open (0 = no limit), the least recently used
 * others are closed: their runs are settled COMPLETED and announced here, and `closed` names them
 * (their calls in flight on this instance are abandoned by the caller; on other instances at
 * their next check). Sessions do not count against the agent-run cap.
 */
export async function openMcpSession(
  deps: Pick<McpSessionDeps, 'db' | 'bus'>,
  actor: Actor,
  configuration: ConfigurationRow,
  options: { readonly maxSessions: number },
): Promise<{ run: RunRow; closed: RunRow[] }> {
  const level = configuration.privacy_level;
  const row = {
    id: newRunId(),
    configuration_id: configuration.id,
    user_id: actor.id,
    status: 'RUNNING',
    prompt: filterRunContent(level, { prompt: null, finalContent: null }).prompt,
    privacy_level: level,
    tool_selection: null,
  } as const;
  const { run, closed } = await insertSessionRunClosingLeastRecent(deps.db, row, options.maxSessions, CLOSED_BY_CAP);
  announceEnded(deps.bus, closed);
  deps.bus.publish({ type: 'started', runId: run.id, run });
  return { run, closed };
}

/** Settles a session once (`userId`, when given, must be its user) and announces it; undefined when it was not open. */
export async function endMcpSession(deps: Pick<McpSessionDeps, 'db' | 'bus'>, runId: string, end: SessionEnd, userId?: string): Promise<RunRow | undefined> {
  const settled = await settleSession(deps.db, runId, end, userId);
  if (settled) announceEnded(deps.bus, [settled]);
  return settled;
}

/**
 * The session `run` (an open MCP run, as the request's check returned it) for one request of
 * `actor` (authenticated by this request: an admin demoted meanwhile is no longer one). Every call
 * passes the one tool seam and is stored as the run's next TOOL step, privacy-filtered, with a
 * sequence taken from the run row (so calls of one session on several instances at once number
 * their steps 1..n), then published on the bus.
 */
export function sessionRequest(deps: McpSessionDeps, run: RunRow, actor: Actor): McpSessionRequest {
  const { db, bus } = deps;
  const level = run.privacy_level;
  const configurationId = run.configuration_id;
  const logger = deps.logger.child({ runId: run.id, component: 'mcp' });

  /** The gate of this moment: current switches, configuration, skills and actor. */
  const currentGate = async () => {
    if (configurationId === null) return null;
    const setup = await loadRunSetup(db, configurationId, actor.id);
    if (!setup) return null;
    const view = configurationView(db, setup.configuration, setup.skillIds);
    return { setup, gate: await gateInputFor(db, deps.registry, setup.configuration, actor, null, { view, state: setup.toolState }) };
  };

  const execute = async (name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> => {
    const started = performance.now();
    const refused = (content: string): ToolOutcome => ({ content, isError: true, artifacts: [], durationMs: performance.now() - started });
    const current = await currentGate();
    // The configuration was deleted while the session was open.
    if (!current) return refused(toolFailedError(name));
    const { setup, gate } = current;
    const decision = checkGate(gate, name);
    if (decision.allowed && decision.tool.effect === 'write') return refused(approvalNeedsRunError(decision.tool.name));
    if (decision.allowed) {
      // One request against the user's and the configuration's budgets (no cost: no model is called).
      const guard = createBudgetGuard(
        { db, writer: deps.writer, logger },
        { userId: actor.id, configurationId: setup.configuration.id, modelId: setup.model?.id ?? '', runId: run.id },
        { budgets: setup.budgets },
      );
      const denial = await guard.preflight(0);
      if (denial) {
        logger.warn({ denial }, 'budget pre-flight refused an MCP tool call');
        return refused(budgetExhaustedError(decision.tool.name));
      }
    }
    // The configuration's `maxRemoteToolCalls` holds per session, counted in the run row (any instance).
    const remote = decision.allowed && decision.tool.untrusted === true;
    const remoteBudgetSpent = remote && !(await reserveRemoteCall(db, run.id, setup.configuration.max_remote_tool_calls));
    // The one seam: gate again, argument validation, timeout, bounds, sanitising, quarantine.
    return invokeTool(
      // The stored step is numbered by the database (`call_<sequence>`); this id only names the call in logs and spans.
      { id: `mcp_${randomUUID()}`, name, arguments: args },
      {
        gate,
        logger,
        quarantine: setup.configuration.quarantine_tool_output,
        truncation: setup.configuration.truncation,
        timeoutMs: deps.config.toolTimeoutMs,
        remoteBudgetSpent,
        ...(deps.metrics ? { observer: deps.metrics.observerFor(setup.configuration.id) } : {}),
        spanContent: spanContentFor(level),
        context: { actor, signal, runId: run.id, data: deps.toolData },
      },
    );
  };

  /** Stores the call as the session's next step and publishes it; a failed write flags the audit incomplete. */
  const record = async (name: string, args: Record<string, unknown>, outcome: ToolOutcome) => {
    const full = toStoredStep({
      kind: 'TOOL',
      round: 0,
      toolCallId: 'call_0',
      toolName: name,
      toolArguments: args,
      toolResult: outcome.content,
      toolIsError: outcome.isError,
      // Stored with the audit record (privacy-filtered); never part of the MCP result.
      artifacts: outcome.artifacts,
      durationMs: outcome.durationMs,
    });
    const filtered = filterStep(full, level);
    try {
      const sequence = await insertSessionStep(db, run.id, { payload: filtered, durationMs: filtered.durationMs ?? null });
      const numbered = (step: StoredStep): StoredStep => ({ ...step, round: sequence, ...(step.toolCallId === undefined ? {} : { toolCallId: `call_${sequence}` }) });
      bus.publish({
        type: 'step',
        runId: run.id,
        sequence,
        stateVersion: run.state_version,
        progress: { iterations: 0, usage: ZERO_USAGE },
        full: numbered(full),
        filtered: numbered(filtered),
      });
    } catch (error) {
      logger.error({ err: error }, 'could not store the step of an MCP tool call; the session goes on with an incomplete audit trail');
      await runs.markAuditIncomplete(db, run.id).catch((markError: unknown) => logger.error({ err: markError }, 'could not flag the run as having an incomplete audit trail'));
    }
  };

  return {
    async listTools() {
      const current = await currentGate();
      if (!current) return [];
      return offeredTools(current.gate).map((tool) => ({
        name: tool.name,
        description: tool.description,
        // MCP wants an object schema; every built-in's parameters are one.
        inputSchema: { ...deps.registry.parametersSchema(tool.name), type: 'object' },
        annotations: { readOnlyHint: tool.effect !== 'write' },
      }));
    },
    async callTool(name, args, signal) {
      let outcome: ToolOutcome;
      try {
        outcome = await execute(name, args ?? {}, signal);
      } catch (error) {
        logger.error({ err: error }, 'MCP tool call failed unexpectedly');
        outcome = { content: toolFailedError(name), isError: true, artifacts: [], durationMs: 0 };
      }
      await record(name, args ?? {}, outcome);
      return { content: [{ type: 'text', text: outcome.content }], isError: outcome.isError };
    },
  };
}

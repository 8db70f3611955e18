import type { z } from 'zod';
import type { ToolResult } from './result.ts';

/** Who is acting in a run. `null` in a ToolContext means "no user": user-scoped tools refuse. */
export interface Actor {
  readonly id: string;
  readonly name: string;
  readonly isAdmin: boolean;
}

/** The minimum logging surface a tool may use; pino loggers satisfy it. */
export interface ToolLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * The field the seam sets on every line a tool writes through its own `ctx.logger` (set last, so a
 * tool cannot unset it): `{ origin: "tool" }`. What a tool logs may carry exception text or another
 * user's data; `fetch_logs` shows that such a line exists, never its text.
 */
export const TOOL_LOG_ORIGIN_FIELD = 'origin';
export const TOOL_LOG_ORIGIN = 'tool';

export type ToolEffect = 'read' | 'write';

/**
 * Everything a tool may touch while it runs. The acting user comes from here, never from global
 * state. `data` is the read-only data access the built-ins use (declared by the service that builds
 * the context; third-party tools should treat it as opaque).
 */
export interface ToolContext<Data = unknown> {
  readonly actor: Actor | null;
  readonly logger: ToolLogger;
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly data: Data;
}

export interface Tool<Args = any, Data = any> {
  /** Unique across the registry; a duplicate fails start-up naming both sources. */
  readonly name: string;
  readonly description: string;
  /** Built-ins: content, structure, configuration, system, accounts, editing. Any other string is a new group. */
  readonly group: string;
  /** Validated before `execute`; invalid arguments become an error result, never a throw. */
  readonly parameters: z.ZodType<Args>;
  /** Secret- or system-exposing tools default to off. */
  readonly enabledByDefault: boolean;
  /** System, host or cross-user data: admins only. */
  readonly requiresAdmin: boolean;
  /** `write` means every call waits for human approval. Absent means `read`. */
  readonly effect?: ToolEffect;
  /**
   * Output from outside the operator's control (a remote MCP server's tool): the seam always wraps
   * it in the quarantine envelope, whatever the configuration says, and every call counts against
   * the run's budget of remote calls.
   */
  readonly untrusted?: boolean;
  /**
   * The JSON Schema offered to the model when `parameters` cannot express it (a remote tool keeps
   * its server's own schema; `parameters` then validates against it). Absent: derived from `parameters`.
   */
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  execute(args: Args, ctx: ToolContext<Data>): Promise<ToolResult>;
  /**
   * Write tools: describes the change BEFORE it runs, for the approver (plain text, at most 20
   * lines of 500 characters; the loop enforces the bound). Reads only. A throw or an empty answer
   * is shown to the approver as such, never hidden.
   */
  preview?(args: Args, ctx: ToolContext<Data>): Promise<string>;
  /**
   * Data-level permission of `ctx.actor` for this call (e.g. a write grant on the table), beyond
   * the gate. Approving a write requires that the APPROVER could run it themselves.
   */
  mayRun?(args: Args, ctx: ToolContext<Data>): Promise<boolean>;
}

/** How a tool is described to a model (the function-calling spec). `parameters` is JSON Schema. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

/**
 * Read access to the registered tools; the tool registry implements it. `all()` returns every
 * registered tool in registration order, which is the order tools are offered to the model.
 */
export interface ToolLookup {
  get(name: string): Tool | undefined;
  all(): readonly Tool[];
}

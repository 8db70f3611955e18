import { ToolResult } from '../result.ts';
import type { Actor, ToolContext } from '../tool.ts';

/**
 * The built-ins' own check of who is calling, before they read anything. The gate already keeps
 * admin tools from non-admins; checking again here means a tool stays safe even when invoked
 * outside the loop (a test, a script, a future caller that forgot the gate).
 */
export const NO_ACTOR_ERROR = 'Error: this tool needs a signed-in user; nothing was read.';
export const NOT_ADMIN_ERROR = 'Error: this tool is for administrators only; nothing was read.';

/** The acting user, or the error result to return when there is none. */
export function actingUser(ctx: ToolContext<unknown>): Actor | ToolResult {
  return ctx.actor ?? ToolResult.error(NO_ACTOR_ERROR);
}

/** The acting admin, or the error result to return when the caller is missing or not an admin. */
export function actingAdmin(ctx: ToolContext<unknown>): Actor | ToolResult {
  if (ctx.actor === null) return ToolResult.error(NO_ACTOR_ERROR);
  return ctx.actor.isAdmin ? ctx.actor : ToolResult.error(NOT_ADMIN_ERROR);
}

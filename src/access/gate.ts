import type { z } from 'zod';
import type { Actor, Tool, ToolLookup } from '../tools/tool.ts';
import type { AllowList } from './allowed-tools.ts';
import { groupEnabled, isAvailable, type ToolState } from './availability.ts';

/**
 * Why the gate refused a tool, in the order the gate checks (cheapest and least revealing first).
 * Only the FIRST failing reason is reported.
 */
export const DENIAL_REASONS = ['notRegistered', 'toolDisabled', 'requiresAdmin', 'notAllowed'] as const;
export type DenialReason = (typeof DENIAL_REASONS)[number];

/**
 * A refusal as a person reads it (a UI beside a disabled checkbox), saying what would change it.
 * Never shown to the model: the model's strings stay generic (below).
 */
export function describeDenial(reason: DenialReason, tool: Pick<Tool, 'group' | 'name' | 'enabledByDefault'>, state: ToolState): string {
  switch (reason) {
    case 'notRegistered':
      return 'No tool of this name is installed on this server.';
    case 'toolDisabled':
      return groupEnabled(state, tool.group)
        ? 'An admin switched this tool off (or it is off by default); ask an admin to switch it on.'
        : `An admin switched off its group "${tool.group}"; ask an admin to switch the group on.`;
    case 'requiresAdmin':
      return 'Only admins may use this tool.';
    case 'notAllowed':
      return "This configuration does not offer it (its allowed tool groups or its skills' tool lists); pick another configuration or ask an admin to allow it.";
  }
}


export interface GateInput {
  readonly registry: ToolLookup;
  /** The admin's global group/tool switches. */
  readonly state: ToolState;
  /** `null` = no user; counts as not admin. */
  readonly actor: Actor | null;
  /** From `resolveAllowedTools`; `null` = no restriction beyond the other checks (the enabled set). */
  readonly allowList: AllowList;
}

export type GateDecision =
  | { readonly allowed: true; readonly tool: Tool }
  | { readonly allowed: false; readonly reason: DenialReason };

/**
 * The one decision about whether `toolName` may run for this actor under this allow-list. Used both
 * to compute the offered set and to re-check EVERY call at execution time (and again on resume
 * after approval), so a model steered by injected text cannot call a tool it was not offered.
 */
export function checkGate(input: GateInput, toolName: string): GateDecision {
  const tool = input.registry.get(toolName);
  if (tool === undefined) return { allowed: false, reason: 'notRegistered' };
  return checkGateFor(input, tool);
}

function checkGateFor(input: GateInput, tool: Tool): GateDecision {
  if (!isAvailable(input.state, tool)) return { allowed: false, reason: 'toolDisabled' };
  if (tool.requiresAdmin && input.actor?.isAdmin !== true) return { allowed: false, reason: 'requiresAdmin' };
  if (input.allowList !== null && !input.allowList.has(tool.name)) return { allowed: false, reason: 'notAllowed' };
  return { allowed: true, tool };
}

/**
 * The tools to offer the model: every registered tool the gate allows, in registry order. With a
 * `null` allow-list this is the enabled set the actor may use, never every registered tool.
 */
export function offeredTools(input: GateInput): Tool[] {
  return input.registry.all().filter((tool) => checkGateFor(input, tool).allowed);
}

export interface ToolExplanation {
  readonly toolName: string;
  readonly group: string;
  readonly offered: boolean;
  /** `null` exactly when `offered` is true. */
  readonly reason: DenialReason | null;
}

/** For admins: every registered tool, whether it would be offered and, if not, the first reason why. */
export function explain(input: GateInput): ToolExplanation[] {
  return input.registry.all().map((tool) => {
    const decision = checkGateFor(input, tool);
    return {
      toolName: tool.name,
      group: tool.group,
      offered: decision.allowed,
      reason: decision.allowed ? null : decision.reason,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Model-facing error strings. These are contract (DESIGN §4, §6): exact, and generic enough that the
// model never learns which rule refused it or what an exception said (it may carry credentials).

export function unknownToolError(name: string): string {
  return `Error: unknown tool "${name}"`;
}

/** The call was refused and not executed. */
export function notPermittedError(name: string): string {
  return `Error: tool "${name}" not permitted`;
}

/** The tool threw; the exception goes to the server log only. */
export function toolFailedError(name: string): string {
  return `Error: tool "${name}" failed.`;
}

/** A call approved for resumption whose tool the gate now refuses (e.g. disabled while waiting). */
export function noLongerPermittedError(name: string): string {
  return `Error: tool "${name}" is no longer permitted and was not executed.`;
}

export function deniedByOperatorError(name: string): string {
  return `Error: tool "${name}" was denied by the operator.`;
}

/** A refusal as the model sees it: unknown tools are named as such, every other reason is generic. */
export function gateErrorFor(reason: DenialReason, name: string): string {
  return reason === 'notRegistered' ? unknownToolError(name) : notPermittedError(name);
}

/**
 * `Error: invalid arguments for tool "X": <path>: <message>; …`. Messages are rebuilt from the
 * structured fields of each issue (code, expected type, bounds, schema-declared options) and never
 * from zod's own `message`: zod and tool authors may quote the received value there, and argument
 * values can hold secrets that must not be echoed into the transcript. Paths (which include object
 * keys) are reported; values never are.
 */
export function invalidArgumentsError(name: string, error: { readonly issues: readonly z.core.$ZodIssue[] }): string {
  const issues = error.issues.map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue)}`);
  return `Error: invalid arguments for tool "${name}": ${issues.join('; ')}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map((segment) => String(segment)).join('.');
}

/** Renders a value declared by the SCHEMA (enum option, literal, bound), never one from the input. */
function formatSchemaValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

const SIZE_UNITS: Readonly<Record<string, string>> = { string: 'characters', array: 'items', set: 'items', file: 'bytes' };

function describeBound(
  kind: 'too big' | 'too small',
  origin: string,
  bound: number | bigint,
  inclusive: boolean | undefined,
  exact: boolean | undefined,
): string {
  const comparison = exact ? 'exactly ' : kind === 'too big' ? (inclusive ? '<=' : '<') : inclusive ? '>=' : '>';
  const shown = origin === 'date' && typeof bound === 'number' ? new Date(bound).toISOString() : formatSchemaValue(bound);
  const unit = SIZE_UNITS[origin];
  return unit === undefined
    ? `${kind}: expected ${origin} to be ${comparison}${shown}`
    : `${kind}: expected ${origin} to have ${comparison}${shown} ${unit}`;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'too_big':
      return describeBound('too big', issue.origin, issue.maximum, issue.inclusive, issue.exact);
    case 'too_small':
      return describeBound('too small', issue.origin, issue.minimum, issue.inclusive, issue.exact);
    case 'invalid_format':
      return describeFormat(issue);
    case 'not_multiple_of':
      return `expected a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      // Key names are reported like path segments: the model needs them to correct the call.
      return `unrecognized ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
    case 'invalid_union':
      return describeUnion(issue);
    case 'invalid_key':
      return `invalid key (${issue.issues.map(describeIssue).join(', ')})`;
    case 'invalid_element':
      return `invalid element (${issue.issues.map(describeIssue).join(', ')})`;
    case 'invalid_value':
      return describeOptions(issue.values);
    case 'custom':
    default:
      // Custom refinement messages are written by the tool and may interpolate the input.
      return 'invalid input';
  }
}

function describeFormat(issue: z.core.$ZodIssueInvalidStringFormat): string {
  const extra = issue as { readonly prefix?: unknown; readonly suffix?: unknown; readonly includes?: unknown };
  switch (issue.format) {
    case 'starts_with':
      return typeof extra.prefix === 'string' ? `must start with ${JSON.stringify(extra.prefix)}` : 'invalid format';
    case 'ends_with':
      return typeof extra.suffix === 'string' ? `must end with ${JSON.stringify(extra.suffix)}` : 'invalid format';
    case 'includes':
      return typeof extra.includes === 'string' ? `must include ${JSON.stringify(extra.includes)}` : 'invalid format';
    case 'regex':
      return issue.pattern === undefined ? 'invalid format' : `must match pattern ${issue.pattern}`;
    default:
      return `invalid ${issue.format}`;
  }
}

function describeOptions(values: readonly unknown[]): string {
  if (values.length === 0) return 'invalid value';
  if (values.length === 1) return `expected ${formatSchemaValue(values[0])}`;
  return `expected one of ${values.map(formatSchemaValue).join(' | ')}`;
}

function describeUnion(issue: z.core.$ZodIssueInvalidUnion): string {
  if (issue.inclusive === false) return 'matched more than one union option';
  if (issue.options !== undefined && issue.options.length > 0) return describeOptions(issue.options);
  // When every option failed only on its type, name the accepted types.
  const types = issue.errors.map((branch) => {
    const only = branch.length === 1 ? branch[0] : undefined;
    return only?.code === 'invalid_type' && only.path.length === 0 ? only.expected : undefined;
  });
  if (types.length > 0 && types.every((type) => type !== undefined)) return `expected ${types.join(' | ')}`;
  return 'no union option matched';
}

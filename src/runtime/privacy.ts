import { countCharacters, isCredentialName, MASK, redact } from '../redaction/redact.ts';
import { STEP_KINDS, type RunStep, type StepKind } from './run.ts';

/**
 * Privacy of the persisted copy (DESIGN.md section 7). Pure: no GraphQL, no SQL. The live step
 * becomes a plain JSON record (`toStoredStep`), which `filterStep` cuts down to a privacy level
 * before it is stored or shown to a non-admin subscriber; admins' live stream gets the verbatim copy.
 *
 * Every length here counts characters, i.e. Unicode code points (what `[...text].length` gives), not
 * the UTF-16 units of `text.length`: an emoji is one character. A lone surrogate counts as one.
 *
 * Over ~250 lines because the stored-step shape, the hostile-input copy and the per-level filter
 * must agree field by field; the redactor they call lives in src/redaction/redact.ts.
 */

export const PRIVACY_LEVELS = ['NONE', 'METADATA', 'REDACTED', 'FULL'] as const;
export type PrivacyLevel = (typeof PRIVACY_LEVELS)[number];
export const DEFAULT_PRIVACY_LEVEL: PrivacyLevel = 'METADATA';

export function isPrivacyLevel(value: unknown): value is PrivacyLevel {
  return typeof value === 'string' && (PRIVACY_LEVELS as readonly string[]).includes(value);
}

/** The keys that carry what was said or produced; the levels below FULL never store them verbatim. */
export const CONTENT_KEYS = ['messagesSent', 'content', 'thinking', 'requestedToolCalls', 'toolArguments', 'toolResult', 'toolArtifacts'] as const;
export type ContentKey = (typeof CONTENT_KEYS)[number];

/**
 * A step as stored and as served to non-admin subscribers: a plain JSON-able record. Content keys
 * are present only when the level keeps content; metadata and summaries are there at every level.
 */
export interface StoredStep {
  kind: StepKind;
  round: number;
  /** Wall time of the provider call or tool, in milliseconds; null for REQUEST steps. */
  durationMs: number | null;
  // content keys
  messagesSent?: unknown[];
  content?: string;
  thinking?: string | null;
  requestedToolCalls?: unknown[];
  toolArguments?: unknown;
  toolResult?: string;
  toolArtifacts?: unknown[];
  // metadata (every level)
  toolName?: string;
  toolCallId?: string;
  toolIsError?: boolean;
  /** TOOL: a write interrupted by its process's death, never run again (metadata). */
  outcomeUnknown?: boolean;
  finishReason?: string;
  offeredTools?: string[] | null;
  usage?: { promptTokens: number; completionTokens: number; cost: number };
  /** APPROVAL steps: the human decision (metadata: kept at every level). */
  approval?: { approverId: string; approverName: string; approved: boolean; digest: string; decidedAt: string };
  // summaries (every level), computed from the verbatim content
  /** True unless the content keys hold the verbatim content. */
  contentRedacted: boolean;
  /** LLM: characters of `content`. */
  contentLength?: number;
  /** TOOL: characters of `toolResult`. */
  toolResultLength?: number;
  toolArtifactsCount?: number;
  toolArtifactTypes?: string[];
  /** LLM: the names of the tool calls the model asked for, in order. */
  requestedToolNames?: string[];
  /** REQUEST: how many messages the call sent. */
  messagesSentCount?: number;
}

// ── plain copies of content

const CIRCULAR = '[omitted: circular reference]';
const TOO_DEEP = '[omitted: nested too deep]';
const UNREADABLE = '[omitted: unreadable value]';
/** Nesting kept in a stored copy; deeper values become a marker (artifacts are already capped at 64). */
const MAX_COPY_DEPTH = 100;

type CopyMode = 'verbatim' | 'redacted';

function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` from JSON.parse is an own key; plain assignment would set the prototype instead.
  // Every other key is assigned (the same own, enumerable, writable property, and much cheaper:
  // every stored step is copied this way).
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A key not yet used in `target`: two keys that redact alike (`a@x.io`, `b@x.io`) both survive. */
function freeKey(target: Record<string, unknown>, key: string): string {
  if (!Object.hasOwn(target, key)) return key;
  for (let n = 2; ; n++) {
    const candidate = `${key} (${n})`;
    if (!Object.hasOwn(target, candidate)) return candidate;
  }
}

/**
 * A JSON-able copy of `value` (JSON's own rules: `toJSON` honoured, functions and symbols dropped,
 * non-finite numbers → null, bigints → strings). Cycles, excessive depth and throwing getters become
 * marker strings instead of exceptions. In `redacted` mode every string leaf goes through `redact`,
 * object keys too (a model can put an address or a token in a key as easily as in a value), and
 * every string or number under a credential-named key (`password`, `apiKey`, …) becomes `***`.
 */
function plainCopy(value: unknown, mode: CopyMode): unknown {
  const ancestors = new Set<object>();
  const walk = (item: unknown, depth: number, secret: boolean, viaToJSON: boolean): unknown => {
    switch (typeof item) {
      case 'string':
        if (mode === 'verbatim') return item;
        return secret && item !== '' ? MASK : redact(item);
      case 'number':
        if (!Number.isFinite(item)) return null;
        return mode === 'redacted' && secret ? MASK : item;
      case 'boolean':
        return item;
      case 'bigint':
        return walk(item.toString(), depth, secret, viaToJSON);
      case 'object':
        break;
      default:
        return undefined;
    }
    if (item === null) return null;
    if (ancestors.has(item)) return CIRCULAR;
    if (depth >= MAX_COPY_DEPTH) return TOO_DEEP;
    ancestors.add(item);
    try {
      const toJSON: unknown = viaToJSON ? undefined : (item as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return walk(toJSON.call(item), depth, secret, true);
      if (Array.isArray(item)) {
        const copy: unknown[] = [];
        for (let index = 0; index < item.length; index++) {
          const element = walk(item[index], depth + 1, secret, false);
          copy.push(element === undefined ? null : element);
        }
        return copy;
      }
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(item)) {
        const childSecret = secret || (mode === 'redacted' && isCredentialName(key));
        const member = walk((item as Record<string, unknown>)[key], depth + 1, childSecret, false);
        if (member === undefined) continue;
        defineMember(copy, mode === 'redacted' ? freeKey(copy, redact(key)) : key, member);
      }
      return copy;
    } catch {
      return UNREADABLE;
    } finally {
      ancestors.delete(item);
    }
  };
  return walk(value, 0, false, false);
}

// ── steps

const finiteOr = <T>(value: unknown, fallback: T): number | T => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

function stringsOf(list: unknown, field: 'name' | 'type'): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item: unknown) => {
    const value: unknown = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
    return typeof value === 'string' ? value : '';
  });
}

type ContentOf = (key: ContentKey) => unknown;

/**
 * The summaries of a stored step: the ones it carries, else computed from its content keys as they
 * will be stored (JSON-normalised), so that filtering a filtered copy computes nothing new.
 */
function summariesOf(step: StoredStep, contentOf: ContentOf): Partial<StoredStep> {
  const summaries: Partial<StoredStep> = {};
  const content = (key: ContentKey) => (step[key] === undefined ? undefined : contentOf(key));
  if (isCount(step.contentLength)) summaries.contentLength = step.contentLength;
  else if (typeof content('content') === 'string') summaries.contentLength = countCharacters(content('content') as string);
  if (isCount(step.toolResultLength)) summaries.toolResultLength = step.toolResultLength;
  else if (typeof content('toolResult') === 'string') summaries.toolResultLength = countCharacters(content('toolResult') as string);
  const artifacts = () => content('toolArtifacts');
  if (isCount(step.toolArtifactsCount)) summaries.toolArtifactsCount = step.toolArtifactsCount;
  else if (Array.isArray(artifacts())) summaries.toolArtifactsCount = (artifacts() as unknown[]).length;
  if (isStringList(step.toolArtifactTypes)) summaries.toolArtifactTypes = [...step.toolArtifactTypes];
  else if (Array.isArray(artifacts())) summaries.toolArtifactTypes = stringsOf(artifacts(), 'type');
  const calls = content('requestedToolCalls');
  if (isStringList(step.requestedToolNames)) summaries.requestedToolNames = [...step.requestedToolNames];
  else if (Array.isArray(calls)) summaries.requestedToolNames = stringsOf(calls, 'name');
  if (isCount(step.messagesSentCount)) summaries.messagesSentCount = step.messagesSentCount;
  else if (Array.isArray(content('messagesSent'))) summaries.messagesSentCount = (content('messagesSent') as unknown[]).length;
  return summaries;
}

/**
 * The verbatim stored form of a live step (the FULL copy, and what admins' live stream gets), with
 * every summary computed. The loop's `artifacts` are stored as `toolArtifacts`; REQUEST steps have
 * no duration (`durationMs: null`).
 */
export function toStoredStep(step: RunStep): StoredStep {
  const copy = <T>(value: unknown) => plainCopy(value, 'verbatim') as T;
  switch (step.kind) {
    case 'REQUEST':
      return {
        kind: 'REQUEST',
        round: step.round,
        durationMs: null,
        messagesSent: copy<unknown[]>(step.messagesSent),
        offeredTools: step.offeredTools === null ? null : [...step.offeredTools],
        contentRedacted: false,
        messagesSentCount: step.messagesSent.length,
      };
    case 'LLM':
      return {
        kind: 'LLM',
        round: step.round,
        durationMs: step.durationMs,
        content: step.content,
        thinking: step.thinking,
        requestedToolCalls: copy<unknown[]>(step.requestedToolCalls),
        finishReason: step.finishReason,
        usage: { promptTokens: step.usage.promptTokens, completionTokens: step.usage.completionTokens, cost: step.usage.cost },
        contentRedacted: false,
        contentLength: countCharacters(step.content),
        requestedToolNames: step.requestedToolCalls.map((call) => call.name),
      };
    case 'APPROVAL':
      return {
        kind: 'APPROVAL',
        round: step.round,
        durationMs: null,
        contentRedacted: false,
        approval: { approverId: step.approverId, approverName: step.approverName, approved: step.approved, digest: step.digest, decidedAt: step.decidedAt },
      };
    case 'TOOL':
      return {
        kind: 'TOOL',
        round: step.round,
        durationMs: step.durationMs,
        toolCallId: step.toolCallId,
        toolName: step.toolName,
        toolArguments: copy<unknown>(step.toolArguments),
        toolResult: step.toolResult,
        toolIsError: step.toolIsError,
        ...(step.outcomeUnknown ? { outcomeUnknown: true } : {}),
        toolArtifacts: copy<unknown[]>(step.artifacts),
        contentRedacted: false,
        toolResultLength: countCharacters(step.toolResult),
        toolArtifactsCount: step.artifacts.length,
        toolArtifactTypes: step.artifacts.map((artifact) => artifact.type),
      };
  }
}

/** A level we do not know is treated as the default, which stores no content. */
const levelOrDefault = (level: unknown): PrivacyLevel => (isPrivacyLevel(level) ? level : DEFAULT_PRIVACY_LEVEL);

function metadataOf(step: StoredStep, text: (value: string) => string): StoredStep {
  const kind: StepKind = (STEP_KINDS as readonly unknown[]).includes(step.kind) ? step.kind : 'REQUEST';
  const stored: StoredStep = { kind, round: finiteOr(step.round, 0), durationMs: finiteOr(step.durationMs, null), contentRedacted: true };
  if (typeof step.toolName === 'string') stored.toolName = text(step.toolName);
  if (typeof step.toolCallId === 'string') stored.toolCallId = text(step.toolCallId);
  if (typeof step.toolIsError === 'boolean') stored.toolIsError = step.toolIsError;
  if (step.outcomeUnknown === true) stored.outcomeUnknown = true;
  if (typeof step.finishReason === 'string') stored.finishReason = text(step.finishReason);
  if (step.offeredTools === null) stored.offeredTools = null;
  else if (Array.isArray(step.offeredTools)) stored.offeredTools = step.offeredTools.filter((name) => typeof name === 'string').map(text);
  const approval: unknown = step.approval;
  if (typeof approval === 'object' && approval !== null) {
    const { approverId, approverName, approved, digest, decidedAt } = approval as Record<string, unknown>;
    stored.approval = {
      approverId: String(approverId),
      approverName: text(String(approverName)),
      approved: approved === true,
      digest: String(digest),
      decidedAt: String(decidedAt),
    };
  }
  const usage: unknown = step.usage;
  if (typeof usage === 'object' && usage !== null) {
    const { promptTokens, completionTokens, cost } = usage as Record<string, unknown>;
    stored.usage = { promptTokens: finiteOr(promptTokens, 0), completionTokens: finiteOr(completionTokens, 0), cost: finiteOr(cost, 0) };
  }
  return stored;
}

/**
 * The copy of a stored step kept at `level` (section 7). Returns new objects, never mutates its
 * input and never throws. Only known keys are kept: an unexpected key could carry content.
 *
 * - NONE and METADATA (identical for steps): every content key dropped, `contentRedacted: true`,
 *   summaries and metadata (kind, round, durationMs, usage with tokens and cost, toolName,
 *   toolCallId, toolIsError, finishReason, offeredTools) kept. The run-level difference is in
 *   `filterRunContent`. This is also what retention purges old content to.
 * - REDACTED: the shape stays; every string under a content key goes through `redact`, object keys
 *   included, and values under credential-named keys become `***` (see `plainCopy`). Artifacts are
 *   walked like any other value, so a `type` or `label` that held a secret is masked too and the
 *   artifact is then served as UnknownArtifact. `contentRedacted` is `true` whether or not anything
 *   was found: the copy is not verbatim (every string was capped and checked), and telling a reader
 *   "nothing was hidden here" would itself leak.
 * - FULL: verbatim copies; `contentRedacted` stays whatever the input said (false for a step from
 *   `toStoredStep`), since FULL cannot restore what an earlier filter removed.
 *
 * Below FULL the free-text metadata (tool name, call id, requested tool names, artifact types,
 * offered tool names, finish reason) is passed through `redact` as well: a model can name a tool
 * after a secret it read, and a tool it names but does not have still lands in `toolName`.
 * Ordinary names (`read_records`) are unchanged by it. Summaries are computed from the verbatim
 * content (lengths are of the original), whatever the level.
 */
export function filterStep(step: StoredStep, level: PrivacyLevel): StoredStep {
  try {
    if (typeof step !== 'object' || step === null) return failClosed(step);
    const effective = levelOrDefault(level);
    const full = effective === 'FULL';
    const text = full ? (value: string) => value : redact;
    const stored = metadataOf(step, text);
    // Verbatim, JSON-normalised copies of the content keys, made only when something needs them.
    const copies = new Map<ContentKey, unknown>();
    const contentOf: ContentOf = (key) => {
      if (!copies.has(key)) copies.set(key, plainCopy(step[key], 'verbatim'));
      return copies.get(key);
    };
    const summaries = summariesOf(step, contentOf);
    if (!full) {
      if (summaries.toolArtifactTypes) summaries.toolArtifactTypes = summaries.toolArtifactTypes.map(redact);
      if (summaries.requestedToolNames) summaries.requestedToolNames = summaries.requestedToolNames.map(redact);
    }
    if (effective === 'REDACTED' || full) {
      const content = stored as unknown as Record<ContentKey, unknown>;
      for (const key of CONTENT_KEYS) {
        if (step[key] === undefined) continue;
        content[key] = full ? contentOf(key) : plainCopy(contentOf(key), 'redacted');
      }
    }
    stored.contentRedacted = full ? step.contentRedacted === true : true;
    return { ...stored, ...summaries };
  } catch {
    return failClosed(step);
  }
}

/** What a step that cannot even be read becomes: no content, nothing guessed. */
function failClosed(step: unknown): StoredStep {
  let kind: StepKind = 'REQUEST';
  try {
    const candidate: unknown = (step as { kind?: unknown } | null)?.kind;
    if ((STEP_KINDS as readonly unknown[]).includes(candidate)) kind = candidate as StepKind;
  } catch {
    // keep the default
  }
  return { kind, round: 0, durationMs: null, contentRedacted: true };
}

// ── run-level content

export interface RunContent {
  readonly prompt: string | null;
  readonly finalContent: string | null;
}

export interface StoredRunContent {
  /** What to store as the run's prompt; null when the level stores no content. */
  readonly prompt: string | null;
  readonly finalContent: string | null;
  /** Characters of the verbatim prompt (null when there was none), at every level. */
  readonly promptLength: number | null;
  readonly finalContentLength: number | null;
  readonly contentRedacted: boolean;
}

/**
 * The run's own content keys (its prompt and final content) at `level`: NONE and METADATA store
 * neither (both null), REDACTED stores them through `redact`, FULL verbatim. Lengths are of the
 * verbatim text at every level. NONE and METADATA therefore store the same thing, for runs as for
 * steps: NONE is the promise that no content is stored, METADATA the default that happens to keep
 * the same record; a level that differs (e.g. storing no steps at NONE) would be decided here.
 * A level we do not know stores no content. Never throws.
 */
export function filterRunContent(level: PrivacyLevel, run: RunContent): StoredRunContent {
  const effective = levelOrDefault(level);
  const prompt = typeof run?.prompt === 'string' ? run.prompt : null;
  const finalContent = typeof run?.finalContent === 'string' ? run.finalContent : null;
  const keep = effective === 'FULL' ? (value: string | null) => value : effective === 'REDACTED' ? (value: string | null) => (value === null ? null : redact(value)) : () => null;
  return {
    prompt: keep(prompt),
    finalContent: keep(finalContent),
    promptLength: prompt === null ? null : countCharacters(prompt),
    finalContentLength: finalContent === null ? null : countCharacters(finalContent),
    contentRedacted: effective !== 'FULL',
  };
}

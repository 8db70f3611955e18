import { countCharacters, redact } from '../redaction/redact.ts';
import { plainCopy } from './plain-copy.ts';
import { STEP_KINDS, type StepKind } from './run.ts';
import { CONTENT_KEYS, type ContentKey, type StoredStep } from './stored-step.ts';

/**
 * Privacy of the persisted copy (DESIGN.md section 7). Pure: no GraphQL, no SQL. The live step
 * becomes a plain JSON record (`toStoredStep`, stored-step.ts), which `filterStep` cuts down to a
 * privacy level before it is stored or shown to a non-admin subscriber; admins' live stream gets the
 * verbatim copy.
 *
 * Every length here counts characters, i.e. Unicode code points (what `[...text].length` gives), not
 * the UTF-16 units of `text.length`: an emoji is one character. A lone surrogate counts as one.
 */

export const PRIVACY_LEVELS = ['NONE', 'METADATA', 'REDACTED', 'FULL'] as const;
export type PrivacyLevel = (typeof PRIVACY_LEVELS)[number];
export const DEFAULT_PRIVACY_LEVEL: PrivacyLevel = 'METADATA';

export function isPrivacyLevel(value: unknown): value is PrivacyLevel {
  return typeof value === 'string' && (PRIVACY_LEVELS as readonly string[]).includes(value);
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

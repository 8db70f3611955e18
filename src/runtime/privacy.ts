import { wordsOf } from '../redaction/masking.ts';
import { STEP_KINDS, type RunStep, type StepKind } from './run.ts';

/**
 * Privacy of the persisted copy (DESIGN.md section 7). Pure: no GraphQL, no SQL. The live step
 * becomes a plain JSON record (`toStoredStep`), which `filterStep` cuts down to a privacy level
 * before it is stored or shown to a non-admin subscriber; admins' live stream gets the verbatim copy.
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

// ── the redactor

/** What a masked secret, e-mail address or credential value becomes. */
export const MASK = '***';
/** Longest redacted string, in characters, before the truncation suffix. */
export const REDACTED_MAX_CHARS = 2_000;
export const TRUNCATION_SUFFIX = '… [truncated]';

/** Characters (code points) of `text`; same as `[...text].length` without building the array. */
export function countCharacters(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

/** The UTF-16 index just after the first `max` characters (or the length when shorter). */
function unitsOfCharacters(text: string, max: number): number {
  let units = 0;
  for (let chars = 0; chars < max && units < text.length; chars++) {
    const unit = text.charCodeAt(units);
    const next = text.charCodeAt(units + 1);
    units += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return units;
}

const ALL_MASKED = /^\*+$/;
const isMasked = (value: string): boolean => ALL_MASKED.test(value);

/** Last words that make a parameter, JSON member or object key a credential. */
const CREDENTIAL_WORDS = new Set([
  'key', 'apikey', 'token', 'secret', 'password', 'passwd', 'pwd', 'pass', 'passphrase', 'auth', 'authorization',
  'signature', 'sig', 'credential', 'credentials', 'session', 'sessionid', 'cookie',
]);
/** Endings of the compacted name (`accesstoken`, `PGPASSWORD`, `session_id`). `tokens` is not one: `max_tokens` is a count. */
const CREDENTIAL_ENDINGS = ['apikey', 'accesskey', 'secretkey', 'privatekey', 'token', 'secret', 'password', 'passwd', 'passphrase', 'signature', 'credential', 'sessionid'];

/** A cheap first look: every credential name contains one of these. */
const CREDENTIAL_HINT = /key|token|secret|pass|pwd|auth|sig|credential|session|cookie/i;

/**
 * True for a name whose value is a credential (`api_key`, `access_token`, `X-Amz-Signature`,
 * `DB_PASSWORD`, `password_hash`), judged on its LAST word so counts such as `token_count` and
 * `max_tokens` stay readable. Errs on hiding: `key` alone counts, so `sort_key=name` is masked.
 */
export function isCredentialName(name: string): boolean {
  if (!CREDENTIAL_HINT.test(name)) return false;
  const words = wordsOf(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  const compact = words.join('');
  return CREDENTIAL_WORDS.has(last) || CREDENTIAL_ENDINGS.some((ending) => compact.endsWith(ending)) || /pass(?:word|wd|phrase)/.test(compact);
}

/** A credential value with its auth scheme kept (`Bearer ***`); an already masked value is left alone. */
function maskCredentialValue(value: string): string {
  const scheme = /^(?:bearer|basic|token|digest)\s+/i.exec(value)?.[0] ?? '';
  const rest = value.slice(scheme.length);
  return rest === '' || isMasked(rest) ? value : `${scheme}${MASK}`;
}

/** A parameter value, masked up to its trailing punctuation (`token=abc).` → `token=***).`). */
function maskParameterValue(value: string): string {
  const trailing = /[.,;:!?)\]}]+$/.exec(value)?.[0] ?? '';
  if (trailing.length === value.length) return maskCredentialValue(value);
  return maskCredentialValue(value.slice(0, value.length - trailing.length)) + trailing;
}

/**
 * `Bearer <token>` in free text: anything but an ordinary word is a token. A word (`of`, `bonds`,
 * `Authentication`) is letters only, lower case after the first, under 20 characters; a token has
 * digits, symbols, capitals inside or length (`abc123`, `TOKEN`, `eyJ…`, `sk-…`).
 */
function looksLikeBearerToken(token: string): boolean {
  return token.length >= 20 || !/^[A-Za-z][a-z]*$/.test(token);
}

/** Receives the match and its groups (an optional group that did not take part is undefined). */
type Replacer = (match: string, ...groups: (string | undefined)[]) => string;

/**
 * The secret shapes, applied in order. Rules of the house, for speed and for idempotence:
 * - every pattern starts behind a negative lookbehind, so a long run of look-alike characters is
 *   scanned once, not once per position (no quadratic scans, no nested overlapping quantifiers);
 * - no character class contains `…`, so no pattern runs into the truncation suffix;
 * - a replacement never contains anything a pattern matches, and values that are already `***`
 *   are left as they are.
 */
const SECRET_SHAPES: readonly { readonly name: string; readonly pattern: RegExp; readonly replace: Replacer }[] = [
  {
    // scheme://user:PASSWORD@host. A raw `/` cannot be part of a userinfo (it ends the authority).
    name: 'url-userinfo',
    pattern: /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s@/]*)@/g,
    replace: (_match, scheme, user) => `${scheme!}${user!}:${MASK}@`,
  },
  {
    // Authorization-style headers, HTTP or JSON spelling: the scheme word stays, the credential goes.
    name: 'auth-header',
    pattern:
      /(?<![A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|x-goog-api-key)(["']?[ \t]*[:=][ \t]*["']?)(?:(basic|bearer|token|digest)([ \t]+))?([^\s"'`,;&<>\\…]+)/gi,
    replace: (match, name, separator, scheme, space, value) =>
      isMasked(value!) ? match : `${name}${separator}${scheme ?? ''}${space ?? ''}${MASK}`,
  },
  {
    name: 'bearer',
    pattern: /(?<![A-Za-z0-9_-])(bearer)([ \t]+)([A-Za-z0-9._~+/-]+=*)/gi,
    replace: (match, word, space, token) => (looksLikeBearerToken(token!) ? `${word}${space}${MASK}` : match),
  },
  // OpenAI and Anthropic keys (`sk-`, `sk-proj-`, `sk-ant-`).
  { name: 'openai', pattern: /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g, replace: () => MASK },
  { name: 'stripe', pattern: /(?<![A-Za-z0-9])(?:(?:sk|rk|pk)_(?:live|test)|whsec)_[A-Za-z0-9]{16,}/g, replace: () => MASK },
  { name: 'github', pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, replace: () => MASK },
  // Exact shape: `AKIA` inside a longer word is not a key id.
  { name: 'aws', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, replace: () => MASK },
  { name: 'google', pattern: /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35,}/g, replace: () => MASK },
  { name: 'slack', pattern: /(?<![A-Za-z0-9])(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g, replace: () => MASK },
  { name: 'sendgrid', pattern: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}/g, replace: () => MASK },
  // JWS (three segments) and JWE (five): base64url, the header starting `eyJ` (`{"`).
  { name: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){1,3}/g, replace: () => MASK },
  {
    // `?api_key=…`, `&sig=…`, `DB_PASSWORD=…`, `--token=…`: the name stays, the value goes.
    name: 'credential-parameter',
    pattern: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})=([^\s"'`&#<>\\…]+)/g,
    replace: (match, name, value) => (isCredentialName(name!) ? `${name}=${maskParameterValue(value!)}` : match),
  },
  {
    // `"password": "…"` inside JSON text (tool results often are JSON).
    name: 'credential-json-member',
    pattern: /"([A-Za-z0-9_.-]{1,64})"(\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g,
    replace: (match, name, separator, value) => (isCredentialName(name!) ? `"${name}"${separator}"${maskCredentialValue(value!)}"` : match),
  },
  {
    // The whole address. A domain needs a dotted, alphabetic TLD, so `react@18.2.0` and `user@localhost` stay.
    name: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g,
    replace: () => MASK,
  },
];

function maskOnce(text: string): string {
  let result = text;
  for (const { pattern, replace } of SECRET_SHAPES) result = result.replace(pattern, replace as (match: string, ...rest: unknown[]) => string);
  return result;
}

/**
 * Passes until nothing changes: one shape's mask can expose another (a URL whose user part was an
 * e-mail address), and a fixed point is what makes `redact` idempotent. Two passes in practice.
 */
const MAX_MASK_PASSES = 6;

function maskSecrets(text: string): string {
  let current = text;
  for (let pass = 0; pass < MAX_MASK_PASSES; pass++) {
    const next = maskOnce(current);
    if (next === current) return current;
    current = next;
  }
  return current;
}

/** Exactly `chars` characters: cut, or padded with `*` (the pad only ever follows a mask). */
function fitCharacters(text: string, chars: number): string {
  const units = unitsOfCharacters(text, chars);
  if (units < text.length) return text.slice(0, units);
  const have = countCharacters(text);
  return have < chars ? text + '*'.repeat(chars - have) : text;
}

/**
 * The cap, applied to already masked text. A cut can complete a shape that the following characters
 * had kept from matching (`AKIA` + 16 followed by more letters, a header whose value was cut to its
 * scheme word), so the cut body is masked again; a body that shrank is padded with `*` back to the
 * cap, which keeps `redact(redact(x)) === redact(x)`.
 */
function capCharacters(masked: string): string {
  const end = unitsOfCharacters(masked, REDACTED_MAX_CHARS);
  if (end >= masked.length) return masked;
  let body = masked.slice(0, end);
  for (let attempt = 0; attempt < 4; attempt++) {
    const capped = body + TRUNCATION_SUFFIX;
    const again = maskSecrets(capped);
    if (again === capped) return capped;
    if (!again.endsWith(TRUNCATION_SUFFIX)) break;
    body = fitCharacters(again.slice(0, -TRUNCATION_SUFFIX.length), REDACTED_MAX_CHARS);
  }
  // Not reached by any input we know of; fail closed rather than store something unstable.
  return '*'.repeat(REDACTED_MAX_CHARS) + TRUNCATION_SUFFIX;
}

/**
 * Free text with secrets hidden, for the REDACTED level: vendor keys and tokens (OpenAI/Anthropic,
 * GitHub, AWS key ids, Google, Slack, Stripe, SendGrid), JWTs, `Bearer` tokens, credential
 * parameters (`token=`, `api_key=`, `sig=`, … and `"password": "…"` in JSON text), URL userinfo
 * passwords and e-mail addresses become `***` (names, schemes and `Bearer` stay readable). Model
 * ids, UUIDs, hex digests, paths, versions, dates and IPs are left alone. The result is capped at
 * 2 000 characters plus `… [truncated]`, never splitting a surrogate pair. Idempotent; linear time.
 */
export function redact(text: string): string {
  if (text.length > CLEAN_MEMO_MAX_LENGTH) return capCharacters(maskSecrets(text));
  if (cleanNames.has(text)) return text;
  const redacted = capCharacters(maskSecrets(text));
  if (redacted === text) {
    if (cleanNames.size >= CLEAN_MEMO_SIZE) cleanNames.clear();
    cleanNames.add(text);
  }
  return redacted;
}

/**
 * Short strings known to come out of `redact` unchanged: tool names, finish reasons and the like
 * recur in every step, and each pass runs every secret shape. Only strings with nothing to mask
 * are remembered (never a secret); the set is bounded by clearing it when full.
 */
const cleanNames = new Set<string>();
const CLEAN_MEMO_SIZE = 1_000;
const CLEAN_MEMO_MAX_LENGTH = 128;

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

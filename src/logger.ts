import pino, { type DestinationStream, type Logger } from 'pino';
import { credentialLogPaths, isCredentialName } from './redaction/credentials.ts';
import { redactSecrets } from './redaction/masking.ts';

export type { Logger } from 'pino';

/**
 * Secret values known at run time (admin token, master key, database password, provider API keys
 * once read). Every log line is scrubbed of them before it is written, whatever field they hide in.
 */
export class SecretScrubber {
  readonly #secrets = new Set<string>();

  /** Values shorter than 8 characters are ignored: masking them would shred ordinary text. */
  add(...values: readonly (string | null | undefined)[]): void {
    for (const value of values) if (value && value.length >= 8) this.#secrets.add(value);
  }

  scrub(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      if (result.includes(secret)) result = result.split(secret).join('***redacted***');
      // A secret may reach the log JSON-escaped (quotes, backslashes, control characters).
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && result.includes(escaped)) result = result.split(escaped).join('***redacted***');
    }
    return result;
  }
}

/** What a censored field shows. */
const CENSOR = '***redacted***';

/** Deeper than this, a log object is left as pino wrote it (the scrubber and the shapes still ran over its text). */
const MAX_LOG_DEPTH = 32;

/**
 * A copy of a parsed log value with every string passed through the catalogue's secret shapes and
 * every credential-named member (`password`, `apiKey`, `dbPassword`, `x-auth-token`…) censored,
 * at any depth; `changed` tells whether anything was.
 */
function redactLogValue(value: unknown, depth: number, changed: { value: boolean }): unknown {
  if (typeof value === 'string') {
    const masked = redactSecrets(value);
    if (masked !== value) changed.value = true;
    return masked;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_LOG_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactLogValue(item, depth + 1, changed));
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (isCredentialName(key) && member !== null && typeof member !== 'boolean' && member !== CENSOR) {
      changed.value = true;
      copy[key] = CENSOR;
    } else {
      copy[key] = redactLogValue(member, depth + 1, changed);
    }
  }
  return copy;
}

/**
 * One serialised log line with the redaction catalogue applied: secret shapes masked in every
 * string (the message, bindings, an error's message and stack) and credential-named fields censored
 * at any depth. A line that is not a JSON object is masked as text. Returns the same string when
 * nothing needed hiding.
 */
export function redactLogLine(line: string): string {
  const newline = line.endsWith('\n') ? '\n' : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(newline ? line.slice(0, -1) : line);
  } catch {
    return redactSecrets(line);
  }
  if (typeof parsed !== 'object' || parsed === null) return redactSecrets(line);
  const changed = { value: false };
  const redacted = redactLogValue(parsed, 0, changed);
  return changed.value ? JSON.stringify(redacted) + newline : line;
}

/** The most recent log lines (already scrubbed and redacted), for the `fetch_logs` tool, which renders them again. */
export class LogRing {
  readonly #lines: string[] = [];
  readonly #capacity: number;
  constructor(capacity = 500) {
    this.#capacity = capacity;
  }
  push(line: string): void {
    this.#lines.push(line.endsWith('\n') ? line.slice(0, -1) : line);
    if (this.#lines.length > this.#capacity) this.#lines.splice(0, this.#lines.length - this.#capacity);
  }
  /** Up to `limit` lines, oldest first. */
  last(limit: number): readonly string[] {
    return this.#lines.slice(-Math.max(0, limit));
  }
}

export interface LoggerOptions {
  readonly level: string;
  readonly scrubber: SecretScrubber;
  /** Receives every scrubbed line as it is written. */
  readonly ring?: LogRing;
  /** Where lines go (default stdout); tests pass a collecting stream. */
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      // The cheap first pass: credential-named fields at the top and one level down, before serialising.
      redact: { paths: credentialLogPaths(), censor: CENSOR },
      hooks: {
        streamWrite: (line) => {
          // Known secret values first (wherever they hide), then the catalogue's shapes and names.
          const scrubbed = redactLogLine(options.scrubber.scrub(line));
          options.ring?.push(scrubbed);
          return scrubbed;
        },
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}

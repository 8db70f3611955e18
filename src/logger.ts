import pino, { type DestinationStream, type Logger } from 'pino';

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

/** Field names whose values are never logged, wherever they appear in a log object. */
const REDACTED_PATHS = [
  'authorization',
  'apiKey',
  'api_key',
  'token',
  'password',
  'secret',
  '*.authorization',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.password',
  '*.secret',
  'req.headers.authorization',
  'headers.authorization',
  'connectionParams',
  '*.connectionParams',
  'api_key_ciphertext',
  '*.api_key_ciphertext',
];

/** The most recent log lines (already scrubbed), for the `fetch_logs` tool. */
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
      redact: { paths: REDACTED_PATHS, censor: '***redacted***' },
      hooks: {
        streamWrite: (line) => {
          const scrubbed = options.scrubber.scrub(line);
          options.ring?.push(scrubbed);
          return scrubbed;
        },
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}

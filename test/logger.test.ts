import { describe, expect, it } from 'vitest';
import { createLogger, LogRing, SecretScrubber } from '../src/logger.ts';
import { LogCollector } from './helpers/app.ts';

function logWith(secrets: string[]) {
  const scrubber = new SecretScrubber();
  scrubber.add(...secrets);
  const destination = new LogCollector();
  const ring = new LogRing(3);
  const logger = createLogger({ level: 'info', scrubber, ring, destination });
  return { logger, destination, ring, scrubber };
}

describe('logger', () => {
  it('should mask a registered secret wherever it appears in a line', () => {
    const { logger, destination } = logWith(['sk-live-canary-1234']);
    logger.error({ err: new Error('upstream said: invalid key sk-live-canary-1234') }, 'call failed with sk-live-canary-1234');
    expect(destination.text()).not.toContain('sk-live-canary-1234');
    expect(destination.text()).toContain('***redacted***');
  });

  it('should mask a secret that reaches the line JSON-escaped', () => {
    const secret = 'pa"ss\\word-canary';
    const { logger, destination } = logWith([secret]);
    logger.info({ detail: `x ${secret} y` }, 'escaped');
    expect(destination.text()).not.toContain(JSON.stringify(secret).slice(1, -1));
  });

  it('should redact credential-named fields even when their value is unknown', () => {
    const { logger, destination } = logWith([]);
    logger.info({ authorization: 'Bearer abc', request: { apiKey: 'k-unknown', password: 'p' }, connectionParams: { authorization: 'x' } }, 'fields');
    const line = JSON.parse(destination.lines[0]!);
    expect(line.authorization).toBe('***redacted***');
    expect(line.request).toEqual({ apiKey: '***redacted***', password: '***redacted***' });
    expect(line.connectionParams).toBe('***redacted***');
  });

  it('should ignore values too short to mask safely', () => {
    const scrubber = new SecretScrubber();
    scrubber.add('abc', null, undefined, '');
    expect(scrubber.scrub('abc abc')).toBe('abc abc');
  });

  it('should keep only the most recent scrubbed lines in the ring', () => {
    const { logger, ring } = logWith(['ring-secret-99']);
    for (const n of [1, 2, 3, 4]) logger.info(`line ${n} ring-secret-99`);
    const lines = ring.last(10);
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['line 2 ***redacted***', 'line 3 ***redacted***', 'line 4 ***redacted***']);
  });
});

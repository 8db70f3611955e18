import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, LogRing, SecretScrubber } from '../../src/logger.ts';
import { CREDENTIAL_TERMS, isCredentialColumn, isCredentialName, isSecretEnvName } from '../../src/redaction/credentials.ts';
import { redactEnvValue, redactSecrets } from '../../src/redaction/masking.ts';
import { EMAIL_ADDRESS, ORDINARY_TEXT, SECRET_SHAPES, type Sample } from '../../src/redaction/patterns.ts';
import { redact } from '../../src/redaction/redact.ts';
import { filterStep } from '../../src/runtime/privacy.ts';
import { toStoredStep } from '../../src/runtime/stored-step.ts';
import { readRecordsTool } from '../../src/tools/builtin/read-records.ts';
import type { ToolData } from '../../src/tools/data.ts';
import type { TableArtifact } from '../../src/tools/result.ts';
import type { Actor } from '../../src/tools/tool.ts';
import { LogCollector } from '../helpers/app.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';
import { invoke, toolContext, toolDataOver } from '../tools/builtin/helpers.ts';

/**
 * The ONE redaction catalogue (issue 13), table-driven: every positive sample of every secret shape
 * is masked by all three of its users — (a) the privacy redactor of the stored copy, (b) the data
 * tools (free-text masking, `get_env` values, `read_records` cells from a real table), (c) the
 * logger (what it writes and what its ring hands `fetch_logs`) — and no negative sample is touched
 * by any of them.
 */

const POSITIVES: readonly (readonly [string, Sample])[] = SECRET_SHAPES.flatMap((shape) => shape.positives.map((sample) => [shape.name, sample] as const));
const NEGATIVES: readonly (readonly [string, string])[] = [
  ...ORDINARY_TEXT.map((text) => ['ordinary text', text] as const),
  ...SECRET_SHAPES.flatMap((shape) => shape.negatives.map((text) => [`near ${shape.name}`, text] as const)),
];
const label = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** Every string inside a parsed log line. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(stringsOf);
}

/** One line through a real pino logger: what it wrote, and what its ring kept for fetch_logs. */
function logged(write: (logger: ReturnType<typeof createLogger>) => void): { written: string; ring: string } {
  const destination = new LogCollector();
  const ring = new LogRing();
  write(createLogger({ level: 'info', scrubber: new SecretScrubber(), ring, destination }));
  expect(destination.lines).toHaveLength(1);
  return { written: destination.lines[0]!, ring: ring.last(1)[0]! };
}

describe('the catalogue', () => {
  it('should name every shape once, with samples on both sides', () => {
    const names = SECRET_SHAPES.map((shape) => shape.name);
    expect(new Set(names).size).toBe(names.length);
    for (const shape of [...SECRET_SHAPES, EMAIL_ADDRESS]) {
      expect(shape.positives.length, shape.name).toBeGreaterThan(0);
      expect(shape.negatives.length, shape.name).toBeGreaterThan(0);
      for (const { text, secret } of shape.positives) expect(text).toContain(secret);
    }
    expect(names).toEqual(
      expect.arrayContaining(['url-userinfo', 'pem-private-key', 'auth-header', 'bearer', 'openai', 'stripe', 'github', 'aws', 'google', 'slack', 'sendgrid', 'jwt', 'airlock']),
    );
  });
});

describe('(a) the privacy redactor', () => {
  it.each(POSITIVES.map(([name, sample]) => [name, label(sample.text), sample] as const))('should mask %s: %s', (_name, _label, { text, secret }) => {
    expect(redact(text)).not.toContain(secret);
    // And in a stored step at REDACTED, as a tool result and as a tool argument.
    const step = toStoredStep({
      kind: 'TOOL', round: 1, durationMs: 1, toolCallId: 'c1', toolName: 'read_records', toolArguments: { note: text },
      toolResult: text, toolIsError: false, artifacts: [],
    });
    expect(JSON.stringify(filterStep(step, 'REDACTED'))).not.toContain(JSON.stringify(secret).slice(1, -1));
  });

  it.each(NEGATIVES.map(([name, text]) => [name, label(text), text] as const))('should leave %s alone: %s', (_name, _label, text) => {
    expect(redact(text)).toBe(text);
  });

  it.each(EMAIL_ADDRESS.positives.map((sample) => [label(sample.text), sample] as const))('should mask the e-mail address in %s (the stored copy only)', (_label, { text, secret }) => {
    expect(redact(text)).not.toContain(secret);
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('(b) the data tools: free text and environment values', () => {
  it.each(POSITIVES.map(([name, sample]) => [name, label(sample.text), sample] as const))('should mask %s: %s', (_name, _label, { text, secret }) => {
    expect(redactSecrets(text)).not.toContain(secret);
    expect(redactEnvValue('NOTES', text)).not.toContain(secret);
  });

  it.each(NEGATIVES.map(([name, text]) => [name, label(text), text] as const))('should leave %s alone: %s', (_name, _label, text) => {
    expect(redactSecrets(text)).toBe(text);
    expect(redactEnvValue('NOTES', text)).toBe(text);
  });
});

describe.each(TEST_DATABASES)('(b) the data tools: read_records cells (%s)', (kind) => {
  const admin: Actor = { id: '00000000-0000-4000-8000-0000000000ad', name: 'root', isAdmin: true };
  const samples = [...POSITIVES.map(([, sample]) => sample.text), ...NEGATIVES.map(([, text]) => text)];
  let dispose: () => Promise<void>;
  let data: ToolData;
  /** The `body` cell of every sample row, by sample index, as read_records showed it. */
  const cells: string[] = [];

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    const db = opened.handle.db;
    await sql`create schema if not exists records`.execute(db);
    await sql`create table records.samples (id integer primary key, body text not null)`.execute(db);
    for (const [index, text] of samples.entries()) await sql`insert into records.samples (id, body) values (${index}, ${text})`.execute(db);
    data = toolDataOver(db, kind);
    for (let offset = 0; offset < samples.length; offset += 50) {
      const result = await invoke(readRecordsTool, { table: 'samples', limit: 50, offset }, toolContext(data, admin));
      expect(result.isError, result.content).toBe(false);
      const artifact = result.artifacts[0] as TableArtifact;
      expect(artifact.data.columns).toEqual(['id', 'body']);
      for (const [id, body] of artifact.data.rows) cells[Number(id)] = body!;
      // The text the model reads holds the very same cells.
      for (const row of artifact.data.rows) expect(result.content).toContain(JSON.stringify(row));
    }
  });

  afterAll(async () => {
    await dispose();
  });

  it('should read one cell per sample', () => {
    expect(cells.filter((cell) => cell !== undefined)).toHaveLength(samples.length);
  });

  it.each(POSITIVES.map(([name, sample], index) => [name, label(sample.text), sample, index] as const))('should mask %s in a cell: %s', (_name, _label, { secret }, index) => {
    expect(cells[index]).not.toContain(secret);
  });

  it.each(NEGATIVES.map(([name, text], index) => [name, label(text), text, POSITIVES.length + index] as const))('should show %s in a cell unchanged: %s', (_name, _label, text, index) => {
    expect(cells[index]).toBe(text);
  });
});

describe('(c) the logger', () => {
  it.each(POSITIVES.map(([name, sample]) => [name, label(sample.text), sample] as const))('should mask %s: %s', (_name, _label, { text, secret }) => {
    const lines = [
      logged((logger) => logger.info(text)),
      logged((logger) => logger.warn({ detail: text, nested: { list: [text] } }, 'with fields')),
      logged((logger) => logger.error({ err: new Error(`call failed: ${text}`) }, 'tool execution failed')),
      logged((logger) => logger.child({ runId: text }).info('from a child')),
    ];
    for (const { written, ring } of lines) {
      expect(ring).toBe(written);
      expect(written).not.toContain(secret);
      for (const value of stringsOf(JSON.parse(written))) expect(value).not.toContain(secret);
    }
  });

  it.each(NEGATIVES.map(([name, text]) => [name, label(text), text] as const))('should leave %s alone: %s', (_name, _label, text) => {
    const { written } = logged((logger) => logger.warn({ detail: text }, text));
    const line = JSON.parse(written);
    expect(line.msg).toBe(text);
    expect(line.detail).toBe(text);
  });

  it('should leave e-mail addresses alone (they are not secrets)', () => {
    const { written } = logged((logger) => logger.info('mail jane.doe@example.com'));
    expect(JSON.parse(written).msg).toBe('mail jane.doe@example.com');
  });
});

describe('the credential names, judged alike by all three', () => {
  const spellings = (term: string) => {
    const words = term.split('_');
    return [term, words.join(''), words[0] + words.slice(1).map((word) => word[0]!.toUpperCase() + word.slice(1)).join(''), term.toUpperCase()];
  };
  const valueTerms = CREDENTIAL_TERMS.filter((term) => term.kind === 'value');
  const relatedTerms = CREDENTIAL_TERMS.filter((term) => term.kind === 'related');

  it.each(valueTerms.flatMap(({ term }) => spellings(term).map((name) => [name] as const)))(
    'should hide a value named %s: a stored key, a parameter, a log field, a column, a variable',
    (name) => {
      expect(isCredentialName(name)).toBe(true);
      expect(isCredentialColumn(name)).toBe(true);
      expect(isSecretEnvName(`APP_${name}`)).toBe(true);
      const step = toStoredStep({
        kind: 'TOOL', round: 1, durationMs: 1, toolCallId: 'c1', toolName: 'x', toolArguments: { [name]: 'v4lue-canary' },
        toolResult: `${name}=v4lue-canary`, toolIsError: false, artifacts: [],
      });
      expect(JSON.stringify(filterStep(step, 'REDACTED'))).not.toContain('v4lue-canary');
      expect(redactSecrets(`${name}=v4lue-canary`)).not.toContain('v4lue-canary');
      const deep = logged((logger) => logger.info({ request: { body: { [name]: 'v4lue-canary', [`user_${name}`]: 31_415_926_535 } } }, 'fields'));
      expect(deep.written).not.toContain('v4lue-canary');
      expect(deep.written).not.toContain('31415926535');
    },
  );

  it.each(relatedTerms.map(({ term }) => [term] as const))('should hide a column or a variable named %s, and leave it readable as a key', (term) => {
    expect(isCredentialColumn(term)).toBe(true);
    expect(isSecretEnvName(term.toUpperCase())).toBe(true);
    expect(isCredentialName(term)).toBe(false);
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBusRejections, REJECTION_LOG_INTERVAL_MS } from '../../src/cluster/redis.ts';
import { BUS_WIRE_VERSION, deriveBusKey, MAX_CLOCK_AHEAD_MS, MAX_MESSAGE_AGE_MS, openBusMessage, sealBusMessage, type BusMessage } from '../../src/cluster/signing.ts';
import { insertRun, requestCancel } from '../../src/db/repositories/runs.ts';
import { insertUser, replaceTokenHash, updateUserCredentials } from '../../src/db/repositories/users.ts';
import { createLogger, LogRing, SecretScrubber } from '../../src/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { confirmCancellation } from '../../src/services/run-host/cancellation.ts';
import { confirmRevocation, ROTATION_CONFIRM_WINDOW_MS } from '../../src/services/user-revocations.ts';
import { LogCollector } from '../helpers/app.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';
import { key, samplesOf } from '../helpers/prometheus.ts';

const masterKey = randomBytes(32);
const busKey = deriveBusKey(masterKey);
const CHANNEL = 'airlock:control';
const NOW = 1_800_000_000_000;
const message = (changes: Partial<BusMessage> = {}): BusMessage => ({
  origin: randomUUID(),
  sequence: 7,
  sentAt: NOW,
  key: 'cancel',
  body: JSON.stringify({ runId: randomUUID(), note: 'tabs\tand\nnewlines in the body' }),
  ...changes,
});
/** `raw` with its `field`-th tab-separated field replaced (0 = the version). */
const withField = (raw: string, field: number, value: string) => {
  const parts = raw.split('\t');
  parts[field] = value;
  return parts.join('\t');
};

describe('signing the messages between instances', () => {
  it('should open what it sealed, body and all, with the same key on the same channel', () => {
    const sent = message();
    const opened = openBusMessage(busKey, CHANNEL, sealBusMessage(busKey, CHANNEL, sent), NOW + 5);
    expect(opened).toEqual({ ok: true, message: sent });
  });

  it('should derive the bus key from the master key under its own label: not the master key, the same on every instance', () => {
    expect(busKey).toHaveLength(32);
    expect(busKey.equals(masterKey)).toBe(false);
    expect(deriveBusKey(Buffer.from(masterKey)).equals(busKey)).toBe(true);
    expect(deriveBusKey(randomBytes(32)).equals(busKey)).toBe(false);
  });

  it('should refuse a message signed with another key, or sent on another channel', () => {
    const raw = sealBusMessage(deriveBusKey(randomBytes(32)), CHANNEL, message());
    expect(openBusMessage(busKey, CHANNEL, raw, NOW)).toEqual({ ok: false, reason: 'bad_mac' });
    // The master key itself is not the bus key.
    expect(openBusMessage(busKey, CHANNEL, sealBusMessage(masterKey, CHANNEL, message()), NOW)).toEqual({ ok: false, reason: 'bad_mac' });
    expect(openBusMessage(busKey, 'airlock:events', sealBusMessage(busKey, CHANNEL, message()), NOW)).toEqual({ ok: false, reason: 'bad_mac' });
  });

  it('should refuse a message changed in any signed part: origin, sequence, time, key or body', () => {
    const raw = sealBusMessage(busKey, CHANNEL, message());
    const tampered = [
      withField(raw, 1, randomUUID()),
      withField(raw, 2, '8'),
      withField(raw, 3, String(NOW + 1)),
      withField(raw, 5, 'revocation'),
      raw.replace('"runId":"', '"runId":"0'),
      `${raw} `,
    ];
    for (const changed of tampered) expect(openBusMessage(busKey, CHANNEL, changed, NOW), changed).toEqual({ ok: false, reason: 'bad_mac' });
  });

  it('should refuse as unsigned what is not in the signed format: the old format, garbage, a missing or short signature', () => {
    const raw = sealBusMessage(busKey, CHANNEL, message());
    const unsigned = [
      `${randomUUID()}\tcancel\t{"runId":"${randomUUID()}"}`,
      'no tabs at all',
      '',
      withField(raw, 0, 'airlock-bus-0'),
      withField(raw, 4, ''),
      withField(raw, 4, Buffer.alloc(16).toString('base64url')),
      withField(raw, 2, '-1'),
      withField(raw, 3, '1e12'),
      `${BUS_WIRE_VERSION}\tonly\ttwo`,
    ];
    for (const text of unsigned) expect(openBusMessage(busKey, CHANNEL, text, NOW), text).toEqual({ ok: false, reason: 'unsigned' });
  });

  it(`should refuse a correctly signed message older than ${MAX_MESSAGE_AGE_MS} ms (stale: a replay) or more than ${MAX_CLOCK_AHEAD_MS} ms ahead (future)`, () => {
    const at = (sentAt: number) => sealBusMessage(busKey, CHANNEL, message({ sentAt }));
    expect(openBusMessage(busKey, CHANNEL, at(NOW - MAX_MESSAGE_AGE_MS), NOW).ok).toBe(true);
    expect(openBusMessage(busKey, CHANNEL, at(NOW - MAX_MESSAGE_AGE_MS - 1), NOW)).toEqual({ ok: false, reason: 'stale' });
    expect(openBusMessage(busKey, CHANNEL, at(NOW + MAX_CLOCK_AHEAD_MS), NOW).ok).toBe(true);
    expect(openBusMessage(busKey, CHANNEL, at(NOW + MAX_CLOCK_AHEAD_MS + 1), NOW)).toEqual({ ok: false, reason: 'future' });
  });
});

describe('counting dropped messages', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('should log the first drop at once, then at most one line per interval with the count since the last line', () => {
    vi.useFakeTimers();
    const logs = new LogCollector();
    const rejections = createBusRejections(createLogger({ level: 'info', scrubber: new SecretScrubber(), ring: new LogRing(), destination: logs }));
    const lines = () => logs.lines.map((line) => JSON.parse(line) as { msg: string; rejected: number; reasons: string });
    rejections.record('unsigned');
    expect(lines()).toHaveLength(1);
    for (let index = 0; index < 500; index += 1) rejections.record(index % 2 === 0 ? 'bad_mac' : 'stale');
    expect(lines()).toHaveLength(1);
    vi.advanceTimersByTime(REJECTION_LOG_INTERVAL_MS);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatchObject({ rejected: 500, reasons: 'bad_mac: 250, stale: 250' });
    // A quiet interval ends the burst: the next drop is logged at once again.
    vi.advanceTimersByTime(REJECTION_LOG_INTERVAL_MS);
    expect(lines()).toHaveLength(2);
    rejections.record('replayed');
    expect(lines()).toHaveLength(3);
    expect(rejections.counts()).toEqual({ unsigned: 1, bad_mac: 250, stale: 250, future: 0, replayed: 1, unconfirmed: 0 });
    rejections.stop();
  });

  it('should expose the counts as airlock_event_bus_rejected_messages_total{reason}', async () => {
    const counts = { unsigned: 3, bad_mac: 1, stale: 0, future: 0, replayed: 2, unconfirmed: 5 };
    const metrics = createMetrics({ approvalsWaiting: async () => 0, redisRejections: () => counts });
    const samples = samplesOf(await metrics.registry.metrics());
    for (const [reason, value] of Object.entries(counts)) expect(samples.get(key('airlock_event_bus_rejected_messages_total', { reason })), reason).toBe(value);
    counts.unsigned = 4;
    expect(samplesOf(await metrics.registry.metrics()).get(key('airlock_event_bus_rejected_messages_total', { reason: 'unsigned' }))).toBe(4);
  });
});

describe.each(TEST_DATABASES)('what the database bears out of a control message (%s)', (kind) => {
  it('should confirm a cancellation only for a run whose cancel was requested', async () => {
    const { handle, dispose } = await openMigratedDb(kind);
    try {
      const { db } = handle;
      const user = await insertUser(db, { id: randomUUID(), name: 'owner', token_hash: randomUUID() });
      const run = await insertRun(db, { id: randomUUID(), configuration_id: null, user_id: user.id, status: 'RUNNING', prompt: 'p', privacy_level: 'METADATA', tool_selection: null });
      expect(await confirmCancellation(db, { runId: run.id })).toBe(false);
      expect(await confirmCancellation(db, { runId: randomUUID() })).toBe(false);
      expect(await requestCancel(db, run.id)).toBe(true);
      expect(await confirmCancellation(db, { runId: run.id })).toBe(true);
    } finally {
      await dispose();
    }
  });

  it('should confirm a revocation only when the user row says the access is gone', async () => {
    const { handle, dispose } = await openMigratedDb(kind);
    try {
      const { db } = handle;
      const user = await insertUser(db, { id: randomUUID(), name: 'member', token_hash: randomUUID(), is_admin: true });
      for (const reason of ['DEACTIVATED', 'DEMOTED', 'TOKEN_ROTATED', 'DELETED'] as const) {
        expect(await confirmRevocation(db, { userId: user.id, reason }), reason).toBe(false);
      }
      expect(await confirmRevocation(db, { userId: 'not-a-uuid', reason: 'DELETED' })).toBe(false);

      await updateUserCredentials(db, user.id, { active: false });
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DEACTIVATED' })).toBe(true);
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DEMOTED' })).toBe(false);
      await updateUserCredentials(db, user.id, { active: true, isAdmin: false });
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DEACTIVATED' })).toBe(false);
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DEMOTED' })).toBe(true);

      const rotated = (await replaceTokenHash(db, user.id, randomUUID()))!;
      expect(await confirmRevocation(db, { userId: user.id, reason: 'TOKEN_ROTATED' })).toBe(true);
      const later = rotated.token_rotated_at!.getTime() + ROTATION_CONFIRM_WINDOW_MS + 1;
      expect(await confirmRevocation(db, { userId: user.id, reason: 'TOKEN_ROTATED' }, later)).toBe(false);

      await db.deleteFrom('users').where('id', '=', user.id).execute();
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DELETED' })).toBe(true);
      expect(await confirmRevocation(db, { userId: user.id, reason: 'DEACTIVATED' })).toBe(true);
    } finally {
      await dispose();
    }
  });
});

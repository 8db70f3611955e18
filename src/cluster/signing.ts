import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * What the instances of one deployment say to each other over Redis is signed: whoever can publish
 * on Redis without the deployment's master key can no longer speak for an instance. Every message
 * carries its origin (the sending instance's id), a per-origin sequence number and the time it was
 * sent, all covered by an HMAC-SHA256 over the channel, those fields, the key and the body.
 *
 * Wire format (one Redis message; the fields before the body hold no tab):
 *   `airlock-bus-1 \t origin \t sequence \t sentAtMs \t signature \t key \t body`
 * where `signature` is the base64url HMAC of `channel \n` followed by every field but itself, joined
 * by tabs. The body is last, so it may hold anything.
 */
export const BUS_WIRE_VERSION = 'airlock-bus-1';

/** The HKDF label of the bus key: the bus never signs with the key that seals stored secrets. */
export const BUS_KEY_LABEL = 'airlock bus v1';

/**
 * How old a message may be when it arrives (ms). Redis delivers in milliseconds; a minute covers
 * a stalled event loop and the clock differences NTP leaves between hosts. Older ones are dropped as
 * stale: a message captured and published again later is refused.
 */
export const MAX_MESSAGE_AGE_MS = 60_000;

/** How far ahead of this instance's clock a message's send time may be (ms): the clock difference allowed. */
export const MAX_CLOCK_AHEAD_MS = 10_000;

/**
 * Why a message from Redis was dropped, in the order they are checked. `unconfirmed` is a control
 * message that was correctly signed but that the database does not bear out (see createRedisBroadcast).
 */
export const BUS_REJECTION_REASONS = ['unsigned', 'bad_mac', 'stale', 'future', 'replayed', 'unconfirmed'] as const;
export type BusRejectionReason = (typeof BUS_REJECTION_REASONS)[number];

/** The bus key of a deployment: HKDF-SHA256 of AIRLOCK_MASTER_KEY under BUS_KEY_LABEL (32 bytes). */
export function deriveBusKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), BUS_KEY_LABEL, 32));
}

export interface BusMessage {
  /** The id of the sending instance (drawn at its start). */
  readonly origin: string;
  /** Increases with every message of that origin: a message seen once is never taken again. */
  readonly sequence: number;
  /** The sender's clock when it sent the message (ms since the epoch). */
  readonly sentAt: number;
  /** A run id, a control message's name. */
  readonly key: string;
  readonly body: string;
}

/**
 * The HMAC of `channel \n head \t key \t body`, fed in pieces: hashing one concatenated string would
 * first copy the body (a 1 MB body: 17 ms instead of 1.3 ms).
 */
const signatureOf = (busKey: Buffer, channel: string, head: string, key: string, body: string) =>
  createHmac('sha256', busKey).update(`${channel}\n${head}\t${key}\t`).update(body).digest();

/** The Redis message that carries `message` on `channel` (the full channel name, prefix included). */
export function sealBusMessage(busKey: Buffer, channel: string, message: BusMessage): string {
  const head = `${BUS_WIRE_VERSION}\t${message.origin}\t${message.sequence}\t${message.sentAt}`;
  return `${head}\t${signatureOf(busKey, channel, head, message.key, message.body).toString('base64url')}\t${message.key}\t${message.body}`;
}

export type OpenedBusMessage = { readonly ok: true; readonly message: BusMessage } | { readonly ok: false; readonly reason: Exclude<BusRejectionReason, 'replayed' | 'unconfirmed'> };

const SIGNATURE_BYTES = 32;
/** A decimal integer Number holds exactly (at most 15 digits). */
const DIGITS = /^(0|[1-9][0-9]{0,14})$/;

/**
 * Checks a Redis message received on `channel` at `now` (ms): its shape, its signature (compared in
 * constant time) and its age. What it returns ok was sent by an instance that holds the bus key, on
 * this channel, at most MAX_MESSAGE_AGE_MS ago. Replays within that window are the caller's to
 * refuse (by origin and sequence).
 */
export function openBusMessage(busKey: Buffer, channel: string, raw: string, now: number): OpenedBusMessage {
  const fields: string[] = [];
  let start = 0;
  for (let index = 0; index < 6; index += 1) {
    const end = raw.indexOf('\t', start);
    if (end < 0) return { ok: false, reason: 'unsigned' };
    fields.push(raw.slice(start, end));
    start = end + 1;
  }
  const [version, origin, sequence, sentAt, signature, key] = fields as [string, string, string, string, string, string];
  if (version !== BUS_WIRE_VERSION || !DIGITS.test(sequence) || !DIGITS.test(sentAt)) return { ok: false, reason: 'unsigned' };
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== SIGNATURE_BYTES) return { ok: false, reason: 'unsigned' };
  const body = raw.slice(start);
  const expected = signatureOf(busKey, channel, `${version}\t${origin}\t${sequence}\t${sentAt}`, key, body);
  if (!timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_mac' };
  const sent = Number(sentAt);
  if (sent < now - MAX_MESSAGE_AGE_MS) return { ok: false, reason: 'stale' };
  if (sent > now + MAX_CLOCK_AHEAD_MS) return { ok: false, reason: 'future' };
  return { ok: true, message: { origin, sequence: Number(sequence), sentAt: sent, key, body } };
}

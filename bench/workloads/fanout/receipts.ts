/**
 * What the fan-out subscribers received, and the figures over all of them (in the driver process,
 * `bench/bin/fanout-driver.ts`, where every receipt time is read on one clock).
 *
 * Lag of a client for an event = its receipt time − the earliest receipt of that event by any
 * client of the same run ("measured from its first receipt"). Only live events count for lag: the
 * ones with a sequence above what any subscriber had received when the harness called `mark-live`.
 * Lag from the event time = its receipt time − the event's `publishedAt`, the server's own time of
 * the event (Airlock's bus stamps it; the raw broadcaster stamps each frame as it starts sending
 * it), both epoch ms on this machine's one clock.
 */
import type { ScheduledFrame } from '../../bin/raw-broadcast.ts';
import { quantile, quantiles, type Quantiles } from '../../lib/stats.ts';

/** One subscriber's receipts, written by its socket's handlers. */
export interface Subscriber {
  readonly group: number;
  /** Which server it is connected to (the index in `wsUrls`; 0 for the raw broadcaster). */
  instance: number;
  /** Receipt time (performance.now()) of the first copy of each sequence. */
  readonly received: Map<number, number>;
  /** Per sequence, ms from the event's `publishedAt` to its first receipt (events that carry one). */
  readonly sinceEvent: Map<number, number>;
  duplicates: number;
  outOfOrder: number;
  lastSequence: number;
  started: boolean;
  finished: boolean;
  completed: boolean;
  error: string | null;
  close(): Promise<void> | void;
}

/** What a subscriber can get wrong, summed over subscribers. */
export interface Defects {
  /** Expected (stored) events a subscriber never received. */
  readonly lost: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  /** Events received that are not in the expected list. */
  readonly unexpected: number;
  /** Subscribers that never saw the end of their run (RunFinishedEvent, then completion). */
  readonly unfinished: number;
}

export interface CollectResult extends Defects {
  readonly subscribers: number;
  readonly liveEvents: number;
  readonly lagSamples: number;
  readonly lagMs: Quantiles;
  /** Lag from each live event's `publishedAt` (null when no event carried one). */
  readonly eventLagMs: Quantiles | null;
  /** Per live event, its last receipt − its first (over the subscribers of its run): quantiles over events. */
  readonly spreadMs: Quantiles;
  /** p99 lag of the subscribers of each instance (index in `wsUrls`). */
  readonly p99ByInstance: readonly number[];
  readonly errors: readonly string[];
  /** From the first to the last live receipt. */
  readonly spanMs: number;
  readonly deliveries: number;
  /**
   * The pace and sizes of the live events: offsets between their server times (`publishedAt`), or
   * between their first receipts for events without one; the schedule the raw baseline replays.
   */
  readonly schedule: readonly ScheduledFrame[];
}

/** The event as a subscriber's sink sees it (a `runEvents` payload). */
/** `publishedAt`: the GraphQL DateTime (ISO 8601, ms) of the server's event time. */
export type ReceivedEvent = { __typename: string; publishedAt?: string | null; step?: { sequence: number } } | undefined;

export function newSubscriber(group: number): Subscriber {
  return { group, instance: 0, received: new Map(), sinceEvent: new Map(), duplicates: 0, outOfOrder: 0, lastSequence: 0, started: false, finished: false, completed: false, error: null, close: () => undefined };
}

/**
 * Records one event; `bytes` is only computed for the first copy of an event by any subscriber,
 * into `frameBytes` by `group:sequence` (to build the schedule).
 */
export function recordEvent(subscriber: Subscriber, frameBytes: Map<string, number>, now: number, event: ReceivedEvent, bytes: () => number): void {
  if (!event) return;
  if (event.__typename === 'RunStartedEvent') subscriber.started = true;
  else if (event.__typename === 'RunFinishedEvent') subscriber.finished = true;
  else if (event.__typename === 'RunStepEvent' && event.step) {
    const sequence = event.step.sequence;
    if (subscriber.received.has(sequence)) subscriber.duplicates += 1;
    else {
      subscriber.received.set(sequence, now);
      const publishedAt = event.publishedAt ? Date.parse(event.publishedAt) : Number.NaN;
      if (Number.isFinite(publishedAt)) subscriber.sinceEvent.set(sequence, performance.timeOrigin + now - publishedAt);
    }
    if (sequence <= subscriber.lastSequence) subscriber.outOfOrder += 1;
    subscriber.lastSequence = Math.max(subscriber.lastSequence, sequence);
    const key = `${subscriber.group}:${sequence}`;
    if (!frameBytes.has(key)) frameBytes.set(key, bytes());
  }
}

/** Per group, the highest sequence any subscriber has received: what came so far is replay. */
export function highestReceived(subscribers: readonly Subscriber[], groups: number): number[] {
  const liveAbove = Array.from({ length: groups }, () => 0);
  for (const subscriber of subscribers) for (const sequence of subscriber.received.keys()) liveAbove[subscriber.group] = Math.max(liveAbove[subscriber.group]!, sequence);
  return liveAbove;
}

/**
 * Compares what each subscriber received with `expected[group]` (the stored steps, or the frames the
 * raw server sent) and measures the lag of the events above `liveAbove[group]`.
 */
export function measureReceipts(
  subscribers: readonly Subscriber[],
  liveAbove: readonly number[],
  frameBytes: ReadonlyMap<string, number>,
  expected: readonly (readonly number[])[],
): CollectResult {
  const lags: number[] = [];
  const eventLags: number[] = [];
  const spreads: number[] = [];
  const lagsByInstance: number[][] = [];
  const schedule: { group: number; sequence: number; at: number; bytes: number }[] = [];
  let firstLive = Number.POSITIVE_INFINITY;
  let lastLive = Number.NEGATIVE_INFINITY;
  let lost = 0;
  let unexpected = 0;
  const members = expected.map((_, group) => subscribers.filter((subscriber) => subscriber.group === group));
  expected.forEach((sequences, group) => {
    const wanted = new Set(sequences);
    for (const subscriber of members[group]!) {
      for (const sequence of sequences) if (!subscriber.received.has(sequence)) lost += 1;
      for (const sequence of subscriber.received.keys()) if (!wanted.has(sequence)) unexpected += 1;
    }
    for (const sequence of sequences) {
      if (sequence <= (liveAbove[group] ?? 0)) continue;
      const receipts = members[group]!.flatMap((subscriber) => {
        const time = subscriber.received.get(sequence);
        const sinceEvent = subscriber.sinceEvent.get(sequence);
        if (sinceEvent !== undefined) eventLags.push(sinceEvent);
        return time === undefined ? [] : [{ time, instance: subscriber.instance }];
      });
      if (receipts.length === 0) continue;
      const first = Math.min(...receipts.map((receipt) => receipt.time));
      // The server's time of the event on this process's clock, when the event carried one.
      const witness = members[group]!.find((subscriber) => subscriber.sinceEvent.has(sequence));
      const publishedAt = witness ? witness.received.get(sequence)! - witness.sinceEvent.get(sequence)! : null;
      firstLive = Math.min(firstLive, first);
      const last = Math.max(...receipts.map((receipt) => receipt.time));
      lastLive = Math.max(lastLive, last);
      spreads.push(last - first);
      for (const { time, instance } of receipts) {
        lags.push(time - first);
        (lagsByInstance[instance] ??= []).push(time - first);
      }
      schedule.push({ group, sequence, at: publishedAt ?? first, bytes: frameBytes.get(`${group}:${sequence}`) ?? 0 });
    }
  });
  const scheduleStart = Math.min(...schedule.map((entry) => entry.at));
  const errors = [...new Set(subscribers.map((subscriber) => subscriber.error).filter((error): error is string => error !== null))].slice(0, 5);
  return {
    subscribers: subscribers.length,
    liveEvents: schedule.length,
    lagSamples: lags.length,
    lagMs: quantiles(lags),
    eventLagMs: eventLags.length > 0 ? quantiles(eventLags) : null,
    spreadMs: quantiles(spreads),
    p99ByInstance: Array.from(lagsByInstance, (instanceLags) => quantile(instanceLags ?? [], 0.99)),
    lost,
    duplicates: subscribers.reduce((sum, subscriber) => sum + subscriber.duplicates, 0),
    outOfOrder: subscribers.reduce((sum, subscriber) => sum + subscriber.outOfOrder, 0),
    unexpected,
    unfinished: subscribers.filter((subscriber) => !subscriber.finished || !subscriber.completed).length,
    errors,
    spanMs: lags.length ? lastLive - firstLive : 0,
    deliveries: lags.length,
    schedule: schedule.map(({ group, sequence, at, bytes }) => ({ group, sequence, offsetMs: at - scheduleStart, bytes })),
  };
}

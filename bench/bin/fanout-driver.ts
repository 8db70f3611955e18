/**
 * The client side of workload 2 (fan-out), in its own process: many subscribers, one socket each
 * (as dashboard tabs would have), all in ONE process so that every receipt time is read on the
 * same clock. Two kinds of subscriber, recorded by the same code:
 * - Airlock: a graphql-ws client (`ws` underneath) subscribed to `runEvents(runId)`;
 * - raw: a bare `ws` client of `bench/bin/raw-broadcast.ts`, whose frames are graphql-ws `next` messages
 *   parsed by the same graphql-ws function.
 * It also starts the runs (`runAgent` on one initiator connection, which stays subscribed: leaving
 * runAgent would cancel the run).
 *
 * Lag of a client for an event = its receipt time − the earliest receipt of that event by any
 * client of the same run ("measured from its first receipt"). Only live events count for lag: the
 * ones with a sequence above what any subscriber had received when the harness called `mark-live`.
 */
import { parseMessage, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { serveDriver } from '../lib/children.ts';
import { connectGraphqlWs, inPool } from '../lib/ws-client.ts';
import { BENCH_PROMPT } from '../lib/agent-tool.ts';
import { quantile } from '../lib/stats.ts';

const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) {
  __typename
  ... on RunStartedEvent { run { id } }
  ... on RunStepEvent { step { sequence } }
  ... on RunFinishedEvent { run { id status } }
} }`;
/** What a run dashboard asks for: enough to draw a timeline, no content. */
const RUN_EVENTS = `subscription($runId: ID!) { runEvents(runId: $runId) {
  __typename
  ... on RunStartedEvent { run { id status } }
  ... on RunStepEvent { step { sequence kind round toolName contentLength } }
  ... on RunFinishedEvent { run { id status iterations } }
} }`;
/** A graphql-ws `next` frame is `{"id":"<uuid>","type":"next","payload":…}`: 70 bytes around the payload. */
const NEXT_FRAME_OVERHEAD = 70;

interface Subscriber {
  readonly group: number;
  /** Which server it is connected to (the index in `wsUrls`; 0 for the raw broadcaster). */
  instance: number;
  /** Receipt time (performance.now()) of the first copy of each sequence. */
  readonly received: Map<number, number>;
  duplicates: number;
  outOfOrder: number;
  lastSequence: number;
  started: boolean;
  finished: boolean;
  completed: boolean;
  error: string | null;
  close(): Promise<void> | void;
}

export interface FrameOfEvent {
  readonly group: number;
  readonly sequence: number;
  /** First receipt, ms after the first live event's first receipt. */
  readonly offsetMs: number;
  readonly bytes: number;
}

export interface CollectResult {
  readonly subscribers: number;
  readonly liveEvents: number;
  readonly lagSamples: number;
  readonly lagMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** p99 lag of the subscribers of each instance (index in `wsUrls`). */
  readonly p99ByInstance: readonly number[];
  /** Expected (stored) events a subscriber never received, summed over subscribers. */
  readonly lost: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  /** Events received that are not in the expected list. */
  readonly unexpected: number;
  /** Subscribers that never saw the end of their run (RunFinishedEvent, then completion). */
  readonly unfinished: number;
  readonly errors: readonly string[];
  /** From the first to the last live receipt. */
  readonly spanMs: number;
  readonly deliveries: number;
  /** The pace and sizes of the live events as received: the schedule the raw baseline replays. */
  readonly schedule: readonly FrameOfEvent[];
}

let subscribers: Subscriber[] = [];
let liveAbove: number[] = [];
const frameBytes = new Map<string, number>();
let initiator: Client | null = null;
let runsPending: Promise<unknown>[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function newSubscriber(group: number): Subscriber {
  return { group, instance: 0, received: new Map(), duplicates: 0, outOfOrder: 0, lastSequence: 0, started: false, finished: false, completed: false, error: null, close: () => undefined };
}

/** Records one event; `bytes` is only computed for the first copy of an event (to build the schedule). */
function record(subscriber: Subscriber, now: number, event: { __typename: string; step?: { sequence: number } } | undefined, bytes: () => number): void {
  if (!event) return;
  if (event.__typename === 'RunStartedEvent') subscriber.started = true;
  else if (event.__typename === 'RunFinishedEvent') subscriber.finished = true;
  else if (event.__typename === 'RunStepEvent' && event.step) {
    const sequence = event.step.sequence;
    if (subscriber.received.has(sequence)) subscriber.duplicates += 1;
    else subscriber.received.set(sequence, now);
    if (sequence <= subscriber.lastSequence) subscriber.outOfOrder += 1;
    subscriber.lastSequence = Math.max(subscriber.lastSequence, sequence);
    const key = `${subscriber.group}:${sequence}`;
    if (!frameBytes.has(key)) frameBytes.set(key, bytes());
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

function reset(): void {
  subscribers = [];
  liveAbove = [];
  frameBytes.clear();
}

// ── Airlock ────────────────────────────────────────────────────────────────
/** Starts `runs` runs on one initiator connection; resolves with their ids once each has started. */
async function startRuns(wsUrl: string, token: string, configurationId: string, runs: number): Promise<string[]> {
  initiator = await connectGraphqlWs(wsUrl, token);
  const client = initiator;
  const ids: Promise<string>[] = [];
  runsPending = [];
  for (let index = 0; index < runs; index++) {
    let resolveId!: (id: string) => void;
    let rejectId!: (error: Error) => void;
    ids.push(new Promise<string>((resolve, reject) => ((resolveId = resolve), (rejectId = reject))));
    const finished = new Promise<void>((resolve, reject) => {
      let status: string | null = null;
      client.subscribe(
        { query: RUN_AGENT, variables: { input: { configurationId, prompt: `${BENCH_PROMPT} (fan-out run ${index + 1})` } } },
        {
          next: (result) => {
            if (result.errors) return rejectId(new Error(JSON.stringify(result.errors)));
            const event = (result.data as { runAgent: { __typename: string; run?: { id: string; status: string } } }).runAgent;
            if (event.__typename === 'RunStartedEvent') resolveId(event.run!.id);
            if (event.__typename === 'RunFinishedEvent') status = event.run!.status;
          },
          error: (error) => {
            const failure = error instanceof Error ? error : new Error(JSON.stringify(error));
            rejectId(failure);
            reject(failure);
          },
          complete: () => (status === 'COMPLETED' ? resolve() : reject(new Error(`run ${index + 1} ended ${status ?? 'without a RunFinishedEvent'}`))),
        },
      );
    });
    finished.catch(() => undefined); // reported by `finish-runs`, not as an unhandled rejection
    runsPending.push(finished);
  }
  return Promise.all(ids);
}

function subscribeRunEvents(client: Client, subscriber: Subscriber, runId: string): void {
  const stop = client.subscribe(
    { query: RUN_EVENTS, variables: { runId } },
    {
      next: (result) => {
        const now = performance.now();
        if (result.errors) subscriber.error = JSON.stringify(result.errors);
        record(subscriber, now, (result.data as { runEvents?: { __typename: string; step?: { sequence: number } } } | undefined)?.runEvents, () => JSON.stringify(result).length + NEXT_FRAME_OVERHEAD);
      },
      error: (error) => {
        subscriber.error = error instanceof Error ? error.message : JSON.stringify(error);
      },
      complete: () => {
        subscriber.completed = true;
      },
    },
  );
  subscriber.close = async () => {
    stop();
    await client.dispose();
  };
}

/**
 * One graphql-ws connection per subscriber, spread over the runs and, with several instances, over
 * the instances too (every run has subscribers on each); resolves once every one has replayed the run so far.
 */
async function openAirlock(wsUrls: readonly string[], token: string, runIds: readonly string[], count: number): Promise<{ open: number }> {
  reset();
  subscribers = await inPool(count, 50, async (index) => {
    const subscriber = newSubscriber(index % runIds.length);
    subscriber.instance = Math.floor(index / runIds.length) % wsUrls.length;
    const client = await connectGraphqlWs(wsUrls[subscriber.instance]!, token);
    subscribeRunEvents(client, subscriber, runIds[subscriber.group]!);
    return subscriber;
  });
  // Started (the server holds its bus subscription) and the stored steps replayed.
  const ready = await waitUntil(() => subscribers.every((subscriber) => (subscriber.started && subscriber.received.size > 0) || subscriber.error !== null), 60_000);
  const failed = subscribers.find((subscriber) => subscriber.error !== null);
  if (failed) throw new Error(`a runEvents subscription failed: ${failed.error}`);
  if (!ready) throw new Error('runEvents subscriptions did not all replay their run within 60 s');
  return { open: subscribers.length };
}

// ── raw ws ─────────────────────────────────────────────────────────────────
async function openRaw(url: string, groups: number, count: number): Promise<{ open: number }> {
  reset();
  subscribers = await inPool(count, 50, async (index) => {
    const subscriber = newSubscriber(index % groups);
    const socket = new WebSocket(`${url}/?group=${subscriber.group}`);
    socket.on('message', (data: Buffer) => {
      // Parsed and validated by graphql-ws's own function, as the graphql-ws client does before its sink runs.
      const message = parseMessage(data.toString('utf8'));
      const now = performance.now();
      const event = message.type === 'next' ? (message.payload.data as { runEvents?: { __typename: string; step?: { sequence: number } } } | undefined)?.runEvents : undefined;
      record(subscriber, now, event, () => data.length);
      if (subscriber.finished) subscriber.completed = true;
    });
    socket.on('error', (error) => (subscriber.error = error.message));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    subscriber.started = true;
    subscriber.close = () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close();
      });
    return subscriber;
  });
  return { open: subscribers.length };
}

// ── both ───────────────────────────────────────────────────────────────────
/** Called right before the events of interest are released: what was received so far is replay. */
function markLive(groups: number): { liveAbove: number[] } {
  liveAbove = Array.from({ length: groups }, () => 0);
  for (const subscriber of subscribers) for (const sequence of subscriber.received.keys()) liveAbove[subscriber.group] = Math.max(liveAbove[subscriber.group]!, sequence);
  return { liveAbove };
}

/**
 * Waits until every subscriber saw its run end (or `timeoutMs`), then compares what each received
 * with `expected[group]` (the stored steps, or the frames the raw server sent) and measures the lag.
 */
async function collect(expected: readonly (readonly number[])[], timeoutMs: number): Promise<CollectResult> {
  await waitUntil(() => subscribers.every((subscriber) => subscriber.completed || subscriber.error !== null), timeoutMs);
  const result = measure(expected);
  await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  reset();
  return result;
}

function measure(expected: readonly (readonly number[])[]): CollectResult {
  const lags: number[] = [];
  const lagsByInstance: number[][] = [];
  const schedule: { group: number; sequence: number; first: number; bytes: number }[] = [];
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
        return time === undefined ? [] : [{ time, instance: subscriber.instance }];
      });
      if (receipts.length === 0) continue;
      const first = Math.min(...receipts.map((receipt) => receipt.time));
      firstLive = Math.min(firstLive, first);
      lastLive = Math.max(lastLive, Math.max(...receipts.map((receipt) => receipt.time)));
      for (const { time, instance } of receipts) {
        lags.push(time - first);
        (lagsByInstance[instance] ??= []).push(time - first);
      }
      schedule.push({ group, sequence, first, bytes: frameBytes.get(`${group}:${sequence}`) ?? 0 });
    }
  });
  const errors = [...new Set(subscribers.map((subscriber) => subscriber.error).filter((error): error is string => error !== null))].slice(0, 5);
  return {
    subscribers: subscribers.length,
    liveEvents: schedule.length,
    lagSamples: lags.length,
    lagMs: { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: lags.length ? Math.max(...lags) : Number.NaN },
    p99ByInstance: Array.from(lagsByInstance, (instanceLags) => quantile(instanceLags ?? [], 0.99)),
    lost,
    duplicates: subscribers.reduce((sum, subscriber) => sum + subscriber.duplicates, 0),
    outOfOrder: subscribers.reduce((sum, subscriber) => sum + subscriber.outOfOrder, 0),
    unexpected,
    unfinished: subscribers.filter((subscriber) => !subscriber.finished || !subscriber.completed).length,
    errors,
    spanMs: lags.length ? lastLive - firstLive : 0,
    deliveries: lags.length,
    schedule: schedule.map(({ group, sequence, first, bytes }) => ({ group, sequence, offsetMs: first - firstLive, bytes })),
  };
}

serveDriver(
  async (message: {
    type: string;
    wsUrl: string;
    /** open-airlock: the instances the subscribers connect to (default: `wsUrl` alone). */
    wsUrls?: string[];
    url: string;
    token: string;
    configurationId: string;
    runs: number;
    runIds: string[];
    groups: number;
    count: number;
    expected: number[][];
    timeoutMs: number;
  }) => {
    switch (message.type) {
      case 'start-runs':
        return { runIds: await startRuns(message.wsUrl, message.token, message.configurationId, message.runs) };
      case 'open-airlock':
        return openAirlock(message.wsUrls ?? [message.wsUrl], message.token, message.runIds, message.count);
      case 'open-raw':
        return openRaw(message.url, message.groups, message.count);
      case 'mark-live':
        return markLive(message.groups);
      case 'collect':
        return collect(message.expected, message.timeoutMs);
      case 'finish-runs': {
        // Every run must have completed; the initiator connection is closed either way.
        try {
          await Promise.all(runsPending);
        } finally {
          await initiator?.dispose();
          initiator = null;
          runsPending = [];
        }
        return {};
      }
      default:
        throw new Error(`unknown request ${message.type}`);
    }
  },
);

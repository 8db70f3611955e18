/**
 * The client side of workload 2 (fan-out), in its own process: many subscribers, one socket each
 * (as dashboard tabs would have), all in ONE process so that every receipt time is read on the
 * same clock. Two kinds of subscriber, recorded by the same code (`workloads/fanout/receipts.ts`,
 * which also measures the lag):
 * - Airlock: a graphql-ws client (`ws` underneath) subscribed to `runEvents(runId)`;
 * - raw: a bare `ws` client of `bench/bin/raw-broadcast.ts`, whose frames are graphql-ws `next` messages
 *   parsed by the same graphql-ws function.
 * It also starts the runs (`workloads/fanout/initiator.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseMessage, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { serveDriver } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { connectGraphqlWs, inPool } from '../lib/ws-client.ts';
import { startInitiatorRuns, type StartedRuns } from '../workloads/fanout/initiator.ts';
import { highestReceived, measureReceipts, newSubscriber, recordEvent, type CollectResult, type ReceivedEvent, type Subscriber } from '../workloads/fanout/receipts.ts';

/** What a run dashboard asks for: enough to draw a timeline, no content. */
const RUN_EVENTS = `subscription($runId: ID!) { runEvents(runId: $runId) {
  __typename
  ... on RunStartedEvent { run { id status } }
  ... on RunStepEvent { publishedAt step { sequence kind round toolName contentLength } }
  ... on RunFinishedEvent { run { id status iterations } }
} }`;
/** A graphql-ws `next` frame is `{"id":"<uuid>","type":"next","payload":…}`: 70 bytes around the payload. */
const NEXT_FRAME_OVERHEAD = 70;

let subscribers: Subscriber[] = [];
let liveAbove: number[] = [];
const frameBytes = new Map<string, number>();
let started: StartedRuns | null = null;

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** A progress line every 1 000 sockets opened (the subscribers workload ramps to 10 000). */
function countOpened(kind: string, opened: number, count: number): void {
  if (opened % 1_000 === 0 || opened === count) {
    progress(`[fanout-driver] ${kind}: ${opened}/${count} sockets open`);
    progressDone();
  }
}

function reset(): void {
  subscribers = [];
  liveAbove = [];
  frameBytes.clear();
}

// ── Airlock ────────────────────────────────────────────────────────────────
function subscribeRunEvents(client: Client, subscriber: Subscriber, runId: string): void {
  const stop = client.subscribe(
    { query: RUN_EVENTS, variables: { runId } },
    {
      next: (result) => {
        const now = performance.now();
        if (result.errors) subscriber.error = JSON.stringify(result.errors);
        recordEvent(subscriber, frameBytes, now, (result.data as { runEvents?: ReceivedEvent } | undefined)?.runEvents, () => JSON.stringify(result).length + NEXT_FRAME_OVERHEAD);
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
  let opened = 0;
  subscribers = await inPool(count, 50, async (index) => {
    const subscriber = newSubscriber(index % runIds.length);
    subscriber.instance = Math.floor(index / runIds.length) % wsUrls.length;
    const client = await connectGraphqlWs(wsUrls[subscriber.instance]!, token);
    subscribeRunEvents(client, subscriber, runIds[subscriber.group]!);
    countOpened('runEvents', ++opened, count);
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
  let opened = 0;
  subscribers = await inPool(count, 50, async (index) => {
    const subscriber = newSubscriber(index % groups);
    const socket = new WebSocket(`${url}/?group=${subscriber.group}`);
    socket.on('message', (data: Buffer) => {
      // Parsed and validated by graphql-ws's own function, as the graphql-ws client does before its sink runs.
      const message = parseMessage(data.toString('utf8'));
      const now = performance.now();
      const event = message.type === 'next' ? (message.payload.data as { runEvents?: ReceivedEvent } | undefined)?.runEvents : undefined;
      recordEvent(subscriber, frameBytes, now, event, () => data.length);
      if (subscriber.finished) subscriber.completed = true;
    });
    socket.on('error', (error) => (subscriber.error = error.message));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    subscriber.started = true;
    countOpened('raw ws', ++opened, count);
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
/**
 * Waits until every subscriber saw its run end (or `timeoutMs`), then compares what each received
 * with `expected[group]` and measures the lag; the subscribers are closed.
 */
async function collect(expected: readonly (readonly number[])[], timeoutMs: number): Promise<CollectResult> {
  await waitUntil(() => subscribers.every((subscriber) => subscriber.completed || subscriber.error !== null), timeoutMs);
  const result = measureReceipts(subscribers, liveAbove, frameBytes, expected);
  await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  reset();
  return result;
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
        started = await startInitiatorRuns(message.wsUrl, message.token, message.configurationId, message.runs);
        return { runIds: started.runIds };
      case 'open-airlock':
        return openAirlock(message.wsUrls ?? [message.wsUrl], message.token, message.runIds, message.count);
      case 'open-raw':
        return openRaw(message.url, message.groups, message.count);
      case 'mark-live':
        // Called right before the events of interest are released: what was received so far is replay.
        liveAbove = highestReceived(subscribers, message.groups);
        return { liveAbove };
      case 'collect':
        return collect(message.expected, message.timeoutMs);
      case 'finish-runs': {
        // Every run must have completed; the initiator connection is closed either way.
        const runs = started;
        started = null;
        await runs?.finish();
        return {};
      }
      default:
        throw new Error(`unknown request ${message.type}`);
    }
  },
);

/**
 * The client side of the `subscribers` workload's ramp, in its own process: N sockets multiplexed
 * on one event loop (one file descriptor each; the workload checks the limit first). Two kinds:
 * - idle: a graphql-ws client, one socket, one `runUpdates(filter)` subscription, counted as open
 *   once its first message (the snapshot of the one run the filter matches) has arrived, so the
 *   server holds the subscription when the ramp is done;
 * - bare: a plain `ws` socket to `bench/bin/bare-ws.ts`, open once the handshake is done.
 * Progress is printed every 1 000 sockets. Driven over IPC (see `lib/children.ts`):
 *   { type: 'open-idle', wsUrl, token, filter, count, label } → { open, rampMs }
 *   { type: 'open-bare', url, count, label }                   → { open, rampMs }
 *   { type: 'close-all' }                                      → { closed }
 */
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { serveDriver } from '../lib/children.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { connectGraphqlWs, inPool } from '../lib/ws-client.ts';

/** What the live runs list of the dashboard asks for (as `workloads/runupdates.ts`). */
const RUN_UPDATES = `subscription($filter: RunFilter) { runUpdates(filter: $filter) { snapshot run { id status createdAt finishedAt iterations usage { totalTokens } } } }`;
/** Sockets being opened at once. */
const IN_FLIGHT = 50;
/** A progress line every this many open sockets. */
const PROGRESS_EVERY = 1_000;

let closers: (() => Promise<void>)[] = [];

/** Opens `count` sockets with `open`, printing progress every 1 000; the closers are kept for close-all. */
async function ramp(label: string, count: number, open: (index: number) => Promise<() => Promise<void>>): Promise<{ open: number; rampMs: number }> {
  const started = performance.now();
  let done = 0;
  const opened = await inPool(count, IN_FLIGHT, async (index) => {
    const close = await open(index);
    done += 1;
    if (done % PROGRESS_EVERY === 0 || done === count) {
      const seconds = (performance.now() - started) / 1000;
      progress(`${label}: ${done}/${count} sockets open (${seconds.toFixed(1)} s, ${(done / seconds).toFixed(0)}/s)`);
      if (done % PROGRESS_EVERY === 0) progressDone();
    }
    return close;
  });
  closers.push(...opened);
  return { open: opened.length, rampMs: performance.now() - started };
}

async function openIdle(wsUrl: string, token: string, filter: object, count: number, label: string): Promise<{ open: number; rampMs: number }> {
  return ramp(label, count, async () => {
    const client: Client = await connectGraphqlWs(wsUrl, token);
    await new Promise<void>((resolve, reject) => {
      let first = true;
      client.subscribe(
        { query: RUN_UPDATES, variables: { filter } },
        {
          next: (result) => {
            if (result.errors) return reject(new Error(JSON.stringify(result.errors)));
            if (first) resolve();
            first = false;
          },
          error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => reject(new Error('runUpdates completed while it should stay open')),
        },
      );
    });
    return () => client.dispose() as Promise<void>;
  });
}

async function openBare(url: string, count: number, label: string): Promise<{ open: number; rampMs: number }> {
  return ramp(label, count, async () => {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.on('error', () => undefined);
    return () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close();
      });
  });
}

async function closeAll(): Promise<{ closed: number }> {
  const closing = closers;
  closers = [];
  await inPool(closing.length, 500, (index) => closing[index]!());
  return { closed: closing.length };
}

serveDriver(async (message: { type: string; wsUrl: string; url: string; token: string; filter: object; count: number; label: string }) => {
  switch (message.type) {
    case 'open-idle':
      return openIdle(message.wsUrl, message.token, message.filter, message.count, message.label);
    case 'open-bare':
      return openBare(message.url, message.count, message.label);
    case 'close-all':
      return closeAll();
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});

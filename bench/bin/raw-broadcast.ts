/**
 * The baseline of workload 2 (fan-out): a bare `ws` server, in its own process, that broadcasts a
 * schedule of frames to groups of clients — no GraphQL, no per-subscriber work, each frame encoded
 * once and written to every socket of its group. The schedule is the one the Airlock server
 * produced in the same run (same groups, same events, same frame sizes, same offsets), so both
 * are measured on the same pace by the same client code (`bench/bin/fanout-driver.ts`).
 *
 * Clients connect to `ws://127.0.0.1:<port>/?group=<g>`. Driven over IPC (see `lib/children.ts`):
 *   { type: 'listen' }                          → { port }
 *   { type: 'play', schedule, clients }         → { sentFrames, lateMs } once every frame and the
 *                                                  closing frame of every group were written
 */
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveDriver } from '../lib/children.ts';

/** One event of the schedule: sent to every client of `group` at `offsetMs` after the start. */
export interface ScheduledFrame {
  readonly group: number;
  readonly sequence: number;
  readonly offsetMs: number;
  /** Size of the frame on the wire, in bytes (the frame is padded to it). */
  readonly bytes: number;
}

export interface PlayResult {
  readonly sentFrames: number;
  /** How late the timer fired, worst case over the schedule (the pace the baseline really kept). */
  readonly lateMs: number;
}

/** A graphql-ws operation id is a UUID: the raw frames carry one of the same length. */
const OPERATION_ID = '00000000-0000-4000-8000-000000000000';

/**
 * The frame a raw client receives: a valid graphql-ws `next` message, so that both kinds of client
 * parse and validate it with the same code (graphql-ws `parseMessage`).
 */
export function rawFrame(frame: { sequence: number; bytes: number; publishedAt: string } | { finished: true }): string {
  if ('finished' in frame) return JSON.stringify({ id: OPERATION_ID, type: 'next', payload: { data: { runEvents: { __typename: 'RunFinishedEvent' } } } });
  const bare = JSON.stringify({ id: OPERATION_ID, type: 'next', payload: { data: { runEvents: { __typename: 'RunStepEvent', publishedAt: frame.publishedAt, step: { sequence: frame.sequence }, pad: '' } } } });
  return bare.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, frame.bytes - Buffer.byteLength(bare)))}"`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const groups = new Map<number, Set<WebSocket>>();
let connected = 0;
let server: WebSocketServer | null = null;

function listen(): Promise<number> {
  return new Promise((resolve, reject) => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => {
      const address = wss.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
    wss.once('error', reject);
    wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      const group = Number(new URL(request.url ?? '/', 'http://localhost').searchParams.get('group') ?? '0');
      let members = groups.get(group);
      if (!members) groups.set(group, (members = new Set()));
      members.add(socket);
      connected += 1;
      socket.once('close', () => {
        members.delete(socket);
        connected -= 1;
      });
      socket.on('error', () => undefined);
    });
    server = wss;
  });
}

function broadcast(group: number, frame: Buffer): number {
  let sent = 0;
  for (const socket of groups.get(group) ?? []) {
    socket.send(frame, { binary: false });
    sent += 1;
  }
  return sent;
}

async function play(schedule: readonly ScheduledFrame[], clients: number): Promise<PlayResult> {
  for (let waited = 0; connected < clients; waited += 10) {
    if (waited > 30_000) throw new Error(`only ${connected} of ${clients} raw clients connected`);
    await sleep(10);
  }
  const frames = [...schedule].sort((a, b) => a.offsetMs - b.offsetMs);
  const started = performance.now();
  let sentFrames = 0;
  let lateMs = 0;
  for (const entry of frames) {
    const wait = started + entry.offsetMs - performance.now();
    if (wait >= 1) await sleep(wait);
    lateMs = Math.max(lateMs, performance.now() - started - entry.offsetMs);
    // Encoded once per event and stamped with its time in the schedule, as Airlock's bus stamps an
    // event when it happens: a frame sent late (behind the frames before it) carries that wait in its lag.
    const publishedAt = new Date(performance.timeOrigin + started + entry.offsetMs).toISOString();
    sentFrames += broadcast(entry.group, Buffer.from(rawFrame({ ...entry, publishedAt })));
  }
  const finished = Buffer.from(rawFrame({ finished: true }));
  for (const group of new Set(schedule.map((entry) => entry.group))) broadcast(group, finished);
  return { sentFrames, lateMs };
}

serveDriver(async (message: { type: string; schedule: ScheduledFrame[]; clients: number }) => {
  switch (message.type) {
    case 'listen':
      return { port: server ? (server.address() as { port: number }).port : await listen() };
    case 'play':
      return play(message.schedule, message.clients);
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});

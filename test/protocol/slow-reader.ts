import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { textOf } from '../helpers/documents.ts';
import { RUN_EVENTS } from '../helpers/runs.ts';

/**
 * A graphql-ws client that stops reading, and the two ways a test makes the server's writes to it
 * stop completing without depending on the machine's speed (test/protocol/slow-subscriber.test.ts).
 */

export interface Received {
  readonly id: string;
  readonly type: string;
  readonly payload?: unknown;
}

/**
 * How long one wait may take before the test fails naming it. Generous on purpose: nothing waited
 * for depends on timing, so a deadline only turns a hang into a readable failure, and a loaded
 * machine (the full suite on two cores) must never reach it.
 */
export const WAIT_MS = 120_000;

/** A graphql-transport-ws client that keeps every message it receives, in order. */
export interface Client {
  readonly socket: WebSocket;
  readonly received: Received[];
  subscribe(id: string, runId: string): void;
  /** A message of subscription `id` mentioned `text`. */
  sent(id: string, text: string): boolean;
  /** Subscription `id` ended (error or complete). */
  ended(id: string): boolean;
  /** Stops and restarts reading the socket (the kernel's buffers fill meanwhile). */
  pause(): void;
  resume(): void;
  /** Polls `condition` (WAIT_MS at most); fails at once, saying so, when the server closed the socket. */
  until(condition: () => boolean | Promise<boolean>, what: string): Promise<void>;
}

export async function connect(url: string, token: string): Promise<Client> {
  const socket = new WebSocket(url, 'graphql-transport-ws');
  const received: Received[] = [];
  const raw: string[] = [];
  let closed: string | null = null;
  socket.on('message', (data) => {
    raw.push(String(data));
    received.push(JSON.parse(String(data)) as Received);
  });
  socket.on('close', (code, reason) => (closed = `${code} ${String(reason)}`));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const client: Client = {
    socket,
    received,
    subscribe: (id, runId) => socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: textOf(RUN_EVENTS), variables: { runId } } })),
    sent: (id, text) => received.some((message, index) => message.id === id && raw[index]!.includes(text)),
    ended: (id) => received.some((message) => message.id === id && (message.type === 'error' || message.type === 'complete')),
    // ws's own pause: pausing its net socket directly does not hold, ws resumes it whenever its frame parser drains.
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    until: (condition, what) =>
      until(async () => {
        if (closed !== null) throw new Error(`the server closed the socket (${closed}) while waiting for ${what}`);
        return condition();
      }, what),
  };
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await client.until(() => received.some((message) => message.type === 'connection_ack'), 'the ack');
  return client;
}

/**
 * Holds every message the server sends (graphql-ws's `send`, never called with the callback it
 * awaits) on the test's connection: its writes stop completing, as they do when the kernel's
 * buffers are full, whatever their size. Pings are not messages: the client still answers them, so
 * the server's keepalive never closes the socket however long the machine takes.
 */
export function holdServerMessages(client: WebSocket) {
  const send = WebSocket.prototype.send;
  const held: { socket: WebSocket; args: Parameters<WebSocket['send']> }[] = [];
  let holding = false;
  WebSocket.prototype.send = function (this: WebSocket, ...args: Parameters<WebSocket['send']>) {
    if (!holding || this === client) return send.apply(this, args);
    held.push({ socket: this, args });
  } as WebSocket['send'];
  return {
    hold: () => (holding = true),
    held: () => held.length,
    /** Sends what was held, in order, and lets every later message through (idempotent). */
    release() {
      holding = false;
      WebSocket.prototype.send = send;
      for (const { socket, args } of held.splice(0)) send.apply(socket, args);
    },
  };
}

/**
 * Answers the server's pings at once on behalf of every client (a server-side socket's `ping`
 * emits the `pong` graphql-ws waits for, before anything is written); returns the undo. A client
 * that stops reading cannot answer them itself: its ping waits behind megabytes of unread data, and
 * graphql-ws's keepalive (a ping every 12 s, the socket closed when one goes unanswered for 12 s)
 * once closed a paused socket on a loaded machine and lost the messages the test waited for. With
 * this, the keepalive cannot fire, however long the pause lasts; keepalive itself is not what the
 * slow-reader tests are about.
 */
export function answerServerPings(client: WebSocket): () => void {
  const ping = WebSocket.prototype.ping;
  WebSocket.prototype.ping = function (this: WebSocket, ...args: Parameters<WebSocket['ping']>) {
    if (this === client) return ping.apply(this, args);
    this.emit('pong', Buffer.alloc(0));
  } as WebSocket['ping'];
  return () => (WebSocket.prototype.ping = ping);
}

/** The most a connection's kernel buffers hold: its receive and send buffers at their autotuned maximum (Linux), else 64 MB. */
export function kernelBufferBytes(): number {
  const largest = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
  try {
    return largest('/proc/sys/net/ipv4/tcp_rmem') + largest('/proc/sys/net/ipv4/tcp_wmem');
  } catch {
    return 64 * 1024 * 1024;
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

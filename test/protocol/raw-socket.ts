import WebSocket from 'ws';
import { textOf, type TypedDocumentNode } from '../helpers/documents.ts';

/** A graphql-transport-ws message as it travels (ids and payloads unchecked on purpose). */
export interface WireMessage {
  readonly type: string;
  readonly id?: string;
  readonly payload?: any;
}

const PROTOCOL = 'graphql-transport-ws';

/**
 * A graphql-ws peer over a bare `ws` socket, for behaviour the client library hides: it sends any
 * frame, records every frame it receives verbatim (`frames`), and waits for messages by predicate.
 */
export class RawSocket {
  /** Every text frame received, verbatim, in order. */
  readonly frames: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #queue: WireMessage[] = [];
  readonly #waiters = new Set<{ match: (message: WireMessage) => boolean; resolve: (message: WireMessage) => void }>();

  readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('message', (data) => {
      const text = data.toString();
      this.frames.push(text);
      const message = JSON.parse(text) as WireMessage;
      for (const waiter of this.#waiters) {
        if (waiter.match(message)) {
          this.#waiters.delete(waiter);
          waiter.resolve(message);
          return;
        }
      }
      this.#queue.push(message);
    });
  }

  /** Opens a socket; with a token, also sends connection_init and waits for the ack. */
  static async open(url: string, token?: string): Promise<RawSocket> {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), PROTOCOL);
    const raw = new RawSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    if (token !== undefined) {
      raw.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
      await raw.next((message) => message.type === 'connection_ack');
    }
    return raw;
  }

  send(message: WireMessage | Record<string, unknown>): void {
    this.socket.send(JSON.stringify(message));
  }

  subscribe<TVariables>(id: string, document: TypedDocumentNode<unknown, TVariables> | string, variables?: TVariables): void {
    this.send({ id, type: 'subscribe', payload: { query: textOf(document), ...(variables ? { variables } : {}) } });
  }

  /** The next received message matching `match` (earlier unmatched ones stay queued). */
  next(match: (message: WireMessage) => boolean = () => true, timeoutMs = 10_000): Promise<WireMessage> {
    const index = this.#queue.findIndex(match);
    if (index >= 0) return Promise.resolve(this.#queue.splice(index, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (message: WireMessage) => {
          clearTimeout(timer);
          resolve(message);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no matching message within ${timeoutMs} ms; received: ${this.frames.slice(-5).join(' | ')}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Every message of operation `id` up to and including its `complete` or `error`. */
  async operation(id: string, timeoutMs = 20_000): Promise<WireMessage[]> {
    const messages: WireMessage[] = [];
    for (;;) {
      const message = await this.next((candidate) => candidate.id === id, timeoutMs);
      messages.push(message);
      if (message.type === 'complete' || message.type === 'error') return messages;
    }
  }

  /** Messages received so far that nobody waited for. */
  pending(): readonly WireMessage[] {
    return this.#queue;
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close(1000);
    await this.closed;
  }
}

/** Polls `read` until it returns a value accepted by `done` (or throws after `timeoutMs`). */
export async function eventually<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms (last value: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

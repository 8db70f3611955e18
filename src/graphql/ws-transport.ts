import { CloseCode, handleProtocols, type ExecutionResult, type Server } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';

/** What the transport logs: a message handler that failed, or the server's own error. */
export interface WsTransportLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export interface WsTransportOptions {
  /** Every socket is pinged this often and closed when it has not answered the previous ping. */
  readonly keepAliveMs: number;
  /**
   * A socket that has sent nothing this long after it opened is closed with 4408, as graphql-ws's
   * `connectionInitWaitTimeout` would (which must then be off: it arms a timer per socket).
   */
  readonly initWaitMs: number;
  /** Where the init waits are kept: one timer wheel for the instance (runtime/timer-wheel.ts). */
  readonly schedule: (delayMs: number, run: () => void) => () => void;
  readonly logger: WsTransportLog;
}

/** graphql-ws's context carries the socket of the connection here (`ctx.extra.socket`). */
export interface WsExtra {
  readonly socket: WebSocket;
}

/**
 * graphql-ws's protocol (`makeServer`) on `ws` sockets: our own adapter in place of
 * `graphql-ws/use/ws`, for what a server with thousands of subscribers needs.
 *
 * - **One keepalive timer per instance**, not one interval (and one timeout per ping) per socket:
 *   every `keepAliveMs` each socket that answered the last ping is pinged again, and one that did not is
 *   terminated (so a dead peer goes within two periods, as before).
 * - **No timer per new socket either**: the wait for its first message (`connection_init`; any
 *   other first message makes graphql-ws close the socket) is a deadline on the instance's timer
 *   wheel, not graphql-ws's own `setTimeout` per socket, which stayed armed for its whole 3 s even
 *   after the init (10 000 dashboards reconnecting at once held thousands of them).
 * - **A `next` frame serialised once for all its subscribers.** Subscribers of one operation and
 *   audience receive the same result object (one execution per event: plugins/shared-execution.ts).
 *   `frames.next` (graphql-ws's `onNext`) serialises that object once, remembers the bytes
 *   for this socket's subscription, and hands graphql-ws a small placeholder payload; the socket's
 *   `send` recognises the placeholder frame and writes the remembered bytes between the
 *   subscription's own id and the frame's end. Per subscriber this costs a copy, not a
 *   serialisation.
 */
export function attachGraphqlWs(wss: WebSocketServer, server: Server<WsExtra>, frames: SharedFrames, options: WsTransportOptions): { dispose(): Promise<void> } {
  const { logger } = options;
  wss.options.handleProtocols = handleProtocols;
  wss.on('error', (error) => {
    logger.error({ err: error }, 'the websocket server failed');
    for (const client of wss.clients) client.close(CloseCode.InternalServerError, 'Internal server error');
  });

  const answered = new WeakSet<WebSocket>();
  const keepAlive = setInterval(() => {
    for (const socket of wss.clients) {
      if (socket.readyState !== socket.OPEN) continue;
      if (!answered.has(socket)) {
        socket.terminate();
        continue;
      }
      answered.delete(socket);
      socket.ping();
    }
  }, options.keepAliveMs);
  keepAlive.unref();

  wss.on('connection', (socket: WebSocket) => {
    answered.add(socket);
    socket.on('pong', () => answered.add(socket));
    let cancelInitWait: (() => void) | null = options.schedule(options.initWaitMs, () => {
      cancelInitWait = null;
      socket.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
    });
    const initWaitOver = () => {
      cancelInitWait?.();
      cancelInitWait = null;
    };
    socket.once('message', initWaitOver);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            const done = (error?: Error) => (error ? reject(error) : resolve());
            const spliced = frames.splice(socket, data);
            if (spliced) socket.send(spliced, { binary: false }, done);
            else socket.send(data, done);
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (message) => {
            try {
              await handle(String(message));
            } catch (error) {
              logger.error({ err: error }, 'a graphql-ws message could not be handled');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket },
    );
    socket.once('close', (code, reason) => {
      initWaitOver();
      void closed(code, String(reason));
    });
  });

  return {
    dispose: async () => {
      clearInterval(keepAlive);
      for (const client of wss.clients) client.close(1001, 'Going away');
      await new Promise<void>((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** The payload graphql-ws is handed instead of a shared result: `send` replaces its frame. */
const PLACEHOLDER = Object.freeze({ 'airlock.sharedFrame': true });
/** How graphql-ws's frame of the placeholder ends (its id comes first: `{"id":…,"type":…}`). */
const PLACEHOLDER_END = `,"type":"next","payload":${JSON.stringify(PLACEHOLDER)}}`;
const FRAME_START = '{"id":';
const FRAME_END = Buffer.from('}');

export interface SharedFrames {
  /** graphql-ws's `onNext`: remembers the result's bytes for this subscription, returns the placeholder. */
  next(socket: WebSocket, id: string, result: ExecutionResult): ExecutionResult;
  /** The frame to write instead of `data` when `data` is a placeholder frame, else null. */
  splice(socket: WebSocket, data: string): Buffer | null;
}

export function createSharedFrames(): SharedFrames {
  /** Each result's payload, serialised once (kept as long as the result object lives). */
  const payloads = new WeakMap<object, Buffer>();
  /** Per socket, per subscription id: the payload its next placeholder frame stands for. */
  const waiting = new WeakMap<WebSocket, Map<string, Buffer>>();

  const payloadOf = (result: ExecutionResult): Buffer => {
    let bytes = payloads.get(result);
    if (!bytes) {
      // What graphql-ws would send: the result, its errors (if any) as their JSON.
      const { errors, ...rest } = result;
      bytes = Buffer.from(JSON.stringify({ ...rest, ...(errors ? { errors: errors.map((error) => error.toJSON()) } : {}) }));
      payloads.set(result, bytes);
    }
    return bytes;
  };

  return {
    next(socket, id, result) {
      let bySubscription = waiting.get(socket);
      if (!bySubscription) waiting.set(socket, (bySubscription = new Map()));
      bySubscription.set(id, payloadOf(result));
      return PLACEHOLDER as ExecutionResult;
    },
    splice(socket, data) {
      if (!data.endsWith(PLACEHOLDER_END) || !data.startsWith(FRAME_START)) return null;
      // The id as graphql-ws wrote it (JSON, escapes included), between the frame's start and end.
      const idJson = data.slice(FRAME_START.length, data.length - PLACEHOLDER_END.length);
      const bySubscription = waiting.get(socket);
      const id = JSON.parse(idJson) as string;
      const payload = bySubscription?.get(id);
      if (!payload) return null;
      bySubscription!.delete(id);
      return Buffer.concat([Buffer.from(`${FRAME_START}${idJson},"type":"next","payload":`), payload, FRAME_END]);
    },
  };
}

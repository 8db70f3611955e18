import type { ExecutionResult } from 'graphql';
import { CloseCode, handleProtocols, type Server } from 'graphql-ws';
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
 * - **A `next` frame serialised once for all its subscribers** (`createSharedFrames` below):
 *   subscribers of one operation and audience receive the same result object (one execution per
 *   event: plugins/shared-execution.ts), whose bytes are written to every socket behind the
 *   subscription's own head. Per subscriber this costs a copy, not a serialisation.
 */
export function attachGraphqlWs(wss: WebSocketServer, server: Server<WsExtra>, options: WsTransportOptions): { dispose(): Promise<void> } {
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
            socket.send(data, (error) => (error ? reject(error) : resolve()));
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

/**
 * Where a subscription's results can be written straight to its socket, past graphql-ws's
 * per-event loop (plugins/shared-execution.ts uses it for results without errors). A result is
 * serialised once for every subscriber of it; each socket gets a frame made of its subscription's
 * own head (`{"id":…,"type":"next","payload":`, built once per subscription) and those bytes.
 */
export interface FrameSink {
  /** Writes `result` as this subscription's `next` frame, calling `taken` once the socket took it (its backpressure; at once when it is no longer open). */
  write(result: ExecutionResult, taken: (error?: Error | null) => void): void;
  /** False once the client completed the subscription or the socket is no longer open. */
  readonly open: boolean;
}

export interface SharedFrames {
  /** Registers the socket and id of the graphql-ws operation whose context this is. */
  attach(context: object, socket: WebSocket, id: string, isOpen: () => boolean): void;
  /** The sink of an operation's context; undefined for one that did not come over a websocket (SSE). */
  sinkOf(context: object): FrameSink | undefined;
}

const FRAME_END = Buffer.from('}');
/** A graphql-ws message is a text frame (one options object for every write). */
const AS_TEXT = { binary: false } as const;

export function createSharedFrames(): SharedFrames {
  /** Each result's payload, serialised once (kept as long as the result object lives). */
  const payloads = new WeakMap<object, Buffer>();
  const sinks = new WeakMap<object, FrameSink>();

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
    attach(context, socket, id, isOpen) {
      // graphql-ws's own stringifyMessage writes the id first, as JSON (escapes included).
      const head = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`);
      const write = (result: ExecutionResult, taken: (error?: Error | null) => void) => {
        if (socket.readyState !== socket.OPEN) return taken();
        socket.send(Buffer.concat([head, payloadOf(result), FRAME_END]), AS_TEXT, taken);
      };
      sinks.set(context, {
        write,
        get open() {
          return socket.readyState === socket.OPEN && isOpen();
        },
      });
    },
    sinkOf: (context) => sinks.get(context),
  };
}

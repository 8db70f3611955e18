import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, GraphQLError, type ExecutionResult } from 'graphql';
import { makeServer } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/instances.ts';
import WebSocket, { WebSocketServer } from 'ws';
import { attachGraphqlWs, createSharedFrames, type FrameSink, type WsExtra } from '../../src/graphql/ws-transport.ts';
import { createTimerWheel, type TimerWheel } from '../../src/runtime/timer-wheel.ts';

const silent = { error: () => undefined };

/** A bare graphql-ws server on the transport (no Airlock around it): a `{ hello }` query. */
async function serve(keepAliveMs: number, initWaitMs = 60_000): Promise<{ url: string; wss: WebSocketServer; wheel: TimerWheel; close: () => Promise<void> }> {
  const schema = buildSchema('type Query { hello: String }');
  const wss = new WebSocketServer({ noServer: true });
  const wheel = createTimerWheel();
  const server = makeServer<Record<string, unknown>, WsExtra>({ schema, roots: { query: { hello: () => 'world' } }, connectionInitWaitTimeout: Infinity });
  const transport = attachGraphqlWs(wss, server, { keepAliveMs, initWaitMs, schedule: wheel.schedule, logger: silent });
  const http: HttpServer = createServer();
  http.on('upgrade', (request, socket, head) => wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request)));
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    wss,
    wheel,
    close: async () => {
      await transport.dispose();
      http.close();
    },
  };
}

/** A connection that has sent connection_init and received the ack. */
async function connect(url: string, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, 'graphql-transport-ws', options);
  await once(socket, 'open');
  socket.send(JSON.stringify({ type: 'connection_init' }));
  const [ack] = await once(socket, 'message');
  expect(JSON.parse(String(ack))).toEqual({ type: 'connection_ack' });
  return socket;
}

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;



/** Writes a result through a sink; resolves once its socket took the frame. */
const sent = (sink: FrameSink, result: ExecutionResult) => new Promise<void>((resolve, reject) => sink.write(result, (error) => (error ? reject(error) : resolve())));

describe('the graphql-ws transport (src/graphql/ws-transport.ts)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('should hold no timer per socket, neither while it waits for connection_init nor once it is idle', async () => {
    const server = await serve(60_000);
    cleanups.push(server.close);
    const before = timers();
    // Opened, not yet initialised: each waits for its connection_init on the wheel (graphql-ws's own
    // wait armed a setTimeout per socket, for 3 s, init or not; graphql-ws/use/ws an interval per socket).
    const opening = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const socket = new WebSocket(server.url, 'graphql-transport-ws');
        await once(socket, 'open');
        return socket;
      }),
    );
    cleanups.push(() => opening.forEach((socket) => socket.terminate()));
    await eventually(async () => server.wheel.pending, (pending) => pending === 50, 'the 50 init waits on the wheel', 30_000);
    expect(timers() - before).toBeLessThan(5);
    const sockets = await Promise.all(Array.from({ length: 50 }, () => connect(server.url)));
    cleanups.push(() => sockets.forEach((socket) => socket.terminate()));
    // The initialised ones no longer wait; the idle ones hold nothing.
    expect(server.wheel.pending).toBe(50);
    expect(timers() - before).toBeLessThan(5);
  });

  it('should close a socket that sends no connection_init in time with 4408, and keep one that did', async () => {
    const server = await serve(60_000, 200);
    cleanups.push(server.close);
    const initialised = await connect(server.url);
    const mute = new WebSocket(server.url, 'graphql-transport-ws');
    cleanups.push(() => [initialised, mute].forEach((socket) => socket.terminate()));
    const [code, reason] = (await once(mute, 'close')) as [number, Buffer];
    expect([code, String(reason)]).toEqual([4408, 'Connection initialisation timeout']);
    expect(server.wheel.pending).toBe(0);
    expect(initialised.readyState).toBe(WebSocket.OPEN);
    initialised.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ hello }' } }));
    const [next] = await once(initialised, 'message');
    expect(JSON.parse(String(next))).toEqual({ id: '1', type: 'next', payload: { data: { hello: 'world' } } });
  });

  it('should close a socket that leaves a ping unanswered, and keep one that answers', async () => {
    const server = await serve(50);
    cleanups.push(server.close);
    const answering = await connect(server.url);
    const silentPeer = await connect(server.url, { autoPong: false });
    cleanups.push(() => [answering, silentPeer].forEach((socket) => socket.terminate()));
    let pings = 0;
    answering.on('ping', () => pings++);
    const [code] = (await once(silentPeer, 'close')) as [number];
    expect(code).toBe(1006); // terminated, no close frame
    const seen = pings;
    await eventually(async () => pings, (count) => count >= seen + 3, 'three more pings to the answering socket', 30_000);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    // It still speaks the protocol.
    answering.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ hello }' } }));
    const [next] = await once(answering, 'message');
    expect(JSON.parse(String(next))).toEqual({ id: '1', type: 'next', payload: { data: { hello: 'world' } } });
  });
});

describe('shared frames', () => {
  /** A stand-in for a socket: what the frames use of one (its state, `send` with a callback). */
  const fakeSocket = () => {
    const written: Buffer[] = [];
    const socket = {
      OPEN: 1,
      readyState: 1,
      send: (data: Buffer, _options: object, done: (error?: Error) => void) => {
        written.push(data);
        done();
      },
    };
    return { socket: socket as unknown as WebSocket, written, state: socket };
  };
  const frameOf = (data: Buffer | undefined) => JSON.parse(data!.toString('utf8'));

  it('should serialise a result once for every subscriber of it, each frame with its own id', async () => {
    const frames = createSharedFrames();
    let reads = 0;
    const result: ExecutionResult = {
      data: {
        get step() {
          reads++;
          return { sequence: 7, content: 'héllo \u2028 "quoted"' };
        },
      },
    };
    const a = fakeSocket();
    const b = fakeSocket();
    const subscriptions: [ReturnType<typeof fakeSocket>, string][] = [
      [a, '1'],
      [a, '2'],
      [b, 'a"b\\c\u2028d'],
    ];
    for (const [{ socket }, id] of subscriptions) {
      const context = {};
      frames.attach(context, socket, id, () => true);
      await sent(frames.sinkOf(context)!, result);
    }
    expect(reads).toBe(1);
    const received = [...a.written, ...b.written].map(frameOf);
    expect(received).toEqual(subscriptions.map(([, id]) => ({ id, type: 'next', payload: { data: { step: { sequence: 7, content: 'héllo \u2028 "quoted"' } } } })));
  });

  it('should write errors as graphql-ws does (their JSON), and a new result anew', async () => {
    const frames = createSharedFrames();
    const { socket, written } = fakeSocket();
    const context = {};
    frames.attach(context, socket, '9', () => true);
    const sink = frames.sinkOf(context)!;
    await sent(sink, { data: null, errors: [new GraphQLError('too large', { extensions: { code: 'RESPONSE_TOO_LARGE' } })] });
    await sent(sink, { data: { n: 2 } });
    expect(written.map(frameOf)).toEqual([
      { id: '9', type: 'next', payload: { data: null, errors: [{ message: 'too large', extensions: { code: 'RESPONSE_TOO_LARGE' } }] } },
      { id: '9', type: 'next', payload: { data: { n: 2 } } },
    ]);
  });

  it('should have no sink for a context it was not given, and write nothing to a closed socket or a completed subscription', async () => {
    const frames = createSharedFrames();
    expect(frames.sinkOf({})).toBeUndefined();
    const { socket, written, state } = fakeSocket();
    let subscribed = true;
    const context = {};
    frames.attach(context, socket, '1', () => subscribed);
    const sink = frames.sinkOf(context)!;
    expect(sink.open).toBe(true);
    subscribed = false;
    expect(sink.open).toBe(false);
    subscribed = true;
    state.readyState = 3;
    expect(sink.open).toBe(false);
    await sent(sink, { data: { n: 1 } });
    expect(written).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { RUN_AGENT, RUN_EVENTS, scriptedConfiguration } from '../helpers/runs.ts';
import { eventually, RawSocket, type WireMessage } from './raw-socket.ts';

/** The graphql-transport-ws protocol as a black box: real sockets, raw frames. */

const CAP = 3;
const capMessage = `Too many concurrent subscriptions on this connection (limit ${CAP}).`;
const LOOPING = [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }];

const isNext = (id: string) => (message: WireMessage) => message.id === id && message.type === 'next';
const eventOf = (message: WireMessage) => message.payload.data.runAgent ?? message.payload.data.runEvents;

describe.each(TEST_DATABASES)('graphql-ws protocol on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let slow: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION: String(CAP) } });
    url = (await t.app.server.start()).url;
    // 150 ms per provider call, up to 20 rounds: a run that stays open for seconds unless cancelled.
    slow = await scriptedConfiguration(t, 'slow', { replies: LOOPING, delayMs: 150, maxIterations: 20, privacyLevel: 'FULL' });
  });
  afterAll(() => t.stop());

  const runStatus = async (runId: string) =>
    (await t.gql(`query($id: ID!) { run(id: $id) { status terminationReason } }`, { id: runId })).data.run as { status: string; terminationReason: string | null };

  /** Subscribes `id` to a slow runAgent and resolves with the run id once its first step arrived. */
  async function startSlowRun(socket: RawSocket, id: string): Promise<string> {
    socket.subscribe(id, RUN_AGENT, { input: { configurationId: slow, prompt: 'loop' } });
    const started = eventOf(await socket.next(isNext(id)));
    expect(started.__typename).toBe('RunStartedEvent');
    await socket.next(isNext(id));
    return started.run.id;
  }

  describe('connection', () => {
    it('should close with 4401 when a subscribe arrives before the connection is acknowledged', async () => {
      const socket = await RawSocket.open(url);
      socket.subscribe('early', '{ viewer { name } }');
      expect((await socket.closed).code).toBe(4401);
      expect(socket.frames).toEqual([]);
    });

    it('should close with 4429 on a second connection_init', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${t.adminToken}` } });
      expect((await socket.closed).code).toBe(4429);
    });

    it('should close with 4400 on a frame that is not a graphql-ws message', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      socket.socket.send('{"type":"subscribe","id":');
      expect((await socket.closed).code).toBe(4400);
    });

    it('should answer ping with pong echoing the payload, and answer a pong with nothing', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        socket.send({ type: 'ping', payload: { probe: 1 } });
        expect(await socket.next()).toEqual({ type: 'pong', payload: { probe: 1 } });
        socket.send({ type: 'pong', payload: { unsolicited: true } });
        socket.send({ type: 'ping' });
        // The very next frame answers the ping: the pong got no reply of its own.
        expect(await socket.next()).toEqual({ type: 'pong' });
        expect(socket.pending()).toEqual([]);
        expect(socket.socket.readyState).toBe(socket.socket.OPEN);
      } finally {
        await socket.close();
      }
    });

    it('should mask an unexpected failure while accepting a connection and log it with detail', async () => {
      const db = t.app.services.db;
      const original = db.executeQuery;
      (db as any).executeQuery = () => {
        throw new Error('boom: internal detail postgres://u:ws-pw-canary@h/db');
      };
      try {
        const socket = await RawSocket.open(url);
        socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${t.adminToken}` } });
        const closed = await socket.closed;
        expect(closed.code).toBe(4500);
        expect(closed.reason).not.toContain('boom');
        expect(closed.reason).not.toContain('ws-pw-canary');
        expect(t.logs.text()).toContain('boom: internal detail');
      } finally {
        (db as any).executeQuery = original;
      }
    });
  });

  describe('operations', () => {
    it('should answer an operation whose context cannot be built with a masked error and keep the socket', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      const db = t.app.services.db;
      const original = db.executeQuery;
      try {
        (db as any).executeQuery = () => {
          throw new Error('boom: context detail postgres://u:ctx-pw-canary@h/db');
        };
        socket.subscribe('broken', '{ viewer { name } }');
        const refused = await socket.next((message) => message.id === 'broken');
        (db as any).executeQuery = original;
        expect(refused).toEqual({ id: 'broken', type: 'error', payload: [expect.objectContaining({ message: 'Unexpected error.' })] });
        expect(socket.frames.join('\n')).not.toContain('ctx-pw-canary');
        expect(t.logs.text()).toContain('boom: context detail');
        socket.subscribe('fine', '{ viewer { name } }');
        expect((await socket.operation('fine')).map((message) => message.type)).toEqual(['next', 'complete']);
      } finally {
        (db as any).executeQuery = original;
        await socket.close();
      }
    });

    it('should send complete after the single result of a query', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        socket.subscribe('q1', '{ viewer { name } }');
        expect(await socket.operation('q1')).toEqual([
          { id: 'q1', type: 'next', payload: { data: { viewer: { name: 'admin' } } } },
          { id: 'q1', type: 'complete' },
        ]);
      } finally {
        await socket.close();
      }
    });

    it('should close with 4409 when a subscription id is reused while it is active, and cancel its run', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      const runId = await startSlowRun(socket, 'dup');
      socket.subscribe('dup', '{ viewer { name } }');
      const closed = await socket.closed;
      expect(closed.code).toBe(4409);
      expect(closed.reason).toBe('Subscriber for dup already exists');
      expect(await eventually(() => runStatus(runId), (run) => run.status !== 'RUNNING')).toEqual({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
    });

    it('should accept an id again once its operation completed', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        for (let round = 0; round < 3; round++) {
          socket.subscribe('again', '{ viewer { name } }');
          expect((await socket.operation('again')).map((message) => message.type)).toEqual(['next', 'complete']);
        }
      } finally {
        await socket.close();
      }
    });

    it('should stop an operation the client completes: no next after it, no complete echoed, the run cancelled', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        socket.subscribe('c1', RUN_AGENT, { input: { configurationId: slow, prompt: 'loop' } });
        const runId = eventOf(await socket.next(isNext('c1'))).run.id;
        // Right after a REQUEST step the loop waits 150 ms for the provider: complete lands in that gap.
        for (;;) if (eventOf(await socket.next(isNext('c1'))).step?.kind === 'REQUEST') break;
        socket.send({ id: 'c1', type: 'complete' });
        // The server handles messages in order: once the pong is back, the complete was processed
        // (a frame already on its way when the client sent complete may still arrive before it).
        socket.send({ type: 'ping', payload: { fence: true } });
        await socket.next((message) => message.type === 'pong');
        const framesAtPong = socket.frames.length;
        expect(await eventually(() => runStatus(runId), (run) => run.status !== 'RUNNING')).toEqual({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
        await new Promise((resolve) => setTimeout(resolve, 400));
        const after = socket.frames.slice(framesAtPong).map((frame) => JSON.parse(frame) as WireMessage);
        expect(after.filter((message) => message.id === 'c1')).toEqual([]);
        expect(socket.frames.map((frame) => JSON.parse(frame) as WireMessage).filter((message) => message.id === 'c1' && message.type === 'complete')).toEqual([]);
        // The connection is still usable.
        socket.subscribe('c2', '{ viewer { name } }');
        expect((await socket.operation('c2')).map((message) => message.type)).toEqual(['next', 'complete']);
      } finally {
        await socket.close();
      }
    });
  });

  describe('disposal', () => {
    it.each([
      ['closes cleanly', (socket: RawSocket) => socket.socket.close(1000)],
      ['drops the connection', (socket: RawSocket) => socket.socket.terminate()],
    ])('should release every bus subscription and cancel the run when the client %s', async (_label, end) => {
      const bus = t.app.services.bus;
      const before = bus.subscriberCount();
      const socket = await RawSocket.open(url, t.adminToken);
      const runId = await startSlowRun(socket, 'run');
      socket.subscribe('watch', RUN_EVENTS, { runId });
      await socket.next(isNext('watch'));
      // runAgent holds one bus subscription, runEvents another.
      expect(bus.subscriberCount()).toBe(before + 2);
      end(socket);
      await socket.closed;
      await eventually(() => bus.subscriberCount(), (count) => count === before);
      expect(await eventually(() => runStatus(runId), (run) => run.status !== 'RUNNING')).toEqual({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
    });
  });

  describe('early completion', () => {
    const runningRuns = async () => (await t.gql(`{ runs(first: 100, status: RUNNING) { edges { node { id } } } }`)).data.runs.edges.length as number;

    it('should cancel a runAgent completed before its first event and release its bus subscription', async () => {
      const bus = t.app.services.bus;
      await eventually(runningRuns, (count) => count === 0);
      const before = bus.subscriberCount();
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        for (let index = 0; index < 10; index++) {
          socket.subscribe(`r${index}`, RUN_AGENT, { input: { configurationId: slow, prompt: 'changed my mind' } });
          // Staggered so that some completes land while the context is built, others while the run starts.
          if (index % 2 === 1) await new Promise((resolve) => setImmediate(resolve));
          socket.send({ id: `r${index}`, type: 'complete' });
        }
        socket.send({ type: 'ping' });
        await socket.next((message) => message.type === 'pong');
        await eventually(() => bus.subscriberCount(), (count) => count === before, 3_000);
        await eventually(runningRuns, (count) => count === 0, 3_000);
      } finally {
        await socket.close();
      }
    });

    it('should release the bus subscription of a runEvents completed before its first event', async () => {
      const bus = t.app.services.bus;
      const owner = await RawSocket.open(url, t.adminToken);
      const watcher = await RawSocket.open(url, t.adminToken);
      try {
        const runId = await startSlowRun(owner, 'run');
        const before = bus.subscriberCount();
        for (let index = 0; index < 20; index++) {
          watcher.subscribe(`w${index}`, RUN_EVENTS, { runId });
          if (index % 2 === 1) await new Promise((resolve) => setImmediate(resolve));
          watcher.send({ id: `w${index}`, type: 'complete' });
        }
        watcher.send({ type: 'ping' });
        await watcher.next((message) => message.type === 'pong');
        await eventually(() => bus.subscriberCount(), (count) => count === before, 3_000);
      } finally {
        await watcher.close();
        await owner.close();
      }
    });
  });

  describe(`per-connection cap (AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION=${CAP})`, () => {
    it('should refuse the operation over the cap with an error, keep the connection, and admit one after another completes', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      const other = await RawSocket.open(url, t.adminToken);
      try {
        const runIds: string[] = [];
        for (let index = 1; index <= CAP; index++) runIds.push(await startSlowRun(socket, `s${index}`));
        socket.subscribe('over', RUN_AGENT, { input: { configurationId: slow, prompt: 'one too many' } });
        expect(await socket.next((message) => message.id === 'over')).toEqual({
          id: 'over',
          type: 'error',
          payload: [expect.objectContaining({ message: capMessage })],
        });
        // A query counts as an operation too; the refusal left the socket open.
        socket.subscribe('query', '{ viewer { name } }');
        expect((await socket.next((message) => message.id === 'query')).payload[0].message).toBe(capMessage);
        socket.send({ type: 'ping' });
        expect(await socket.next((message) => message.type === 'pong')).toEqual({ type: 'pong' });
        // The cap is per connection: another socket is not affected.
        other.subscribe('elsewhere', '{ viewer { name } }');
        expect((await other.operation('elsewhere')).map((message) => message.type)).toEqual(['next', 'complete']);

        socket.send({ id: 's1', type: 'complete' });
        await eventually(() => runStatus(runIds[0]!), (run) => run.status === 'CANCELLED');
        socket.subscribe('over', '{ viewer { name } }');
        expect(await socket.operation('over')).toEqual([
          { id: 'over', type: 'next', payload: { data: { viewer: { name: 'admin' } } } },
          { id: 'over', type: 'complete' },
        ]);
      } finally {
        await other.close();
        await socket.close();
      }
    });

    it('should count a burst of subscribes sent at once exactly', async () => {
      const socket = await RawSocket.open(url, t.adminToken);
      try {
        const ids = Array.from({ length: CAP + 3 }, (_, index) => `b${index}`);
        for (const id of ids) socket.subscribe(id, RUN_AGENT, { input: { configurationId: slow, prompt: 'burst' } });
        const first = await Promise.all(ids.map((id) => socket.next((message) => message.id === id)));
        expect(first.filter((message) => message.type === 'next')).toHaveLength(CAP);
        const refused = first.filter((message) => message.type === 'error');
        expect(refused).toHaveLength(3);
        for (const message of refused) expect(message.payload[0].message).toBe(capMessage);
      } finally {
        await socket.close();
      }
    });
  });

  it('should default the cap to 100 and refuse a bad value naming the variable', () => {
    expect(loadConfig({}).maxSubscriptionsPerConnection).toBe(100);
    expect(() => loadConfig({ AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION: 'many' })).toThrow(/AIRLOCK_MAX_SUBSCRIPTIONS_PER_CONNECTION/);
  });
});

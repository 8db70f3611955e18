import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_CONTENT_BYTES } from '../../src/tools/bounds.ts';
import { closeGate } from '../fixtures/tool-modules/gate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_EVENTS, scriptedConfiguration } from '../helpers/runs.ts';

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const GATE = fileURLToPath(new URL('../fixtures/tool-modules/gate.ts', import.meta.url));
const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { ... on Run { id } } }`;
/** AIRLOCK_SUBSCRIBER_BUFFER here: a subscription is cut off once this many events wait for it. */
const BUFFER = 64;
/** The first reply of every run: it holds the run until the test opens the gate. */
const THROUGH_THE_GATE = { content: '', toolCalls: [{ name: 'gate_wait', arguments: {} }] };

interface Received {
  readonly id: string;
  readonly type: string;
  readonly payload?: unknown;
}

/**
 * A dashboard that stops reading (a frozen tab, a client behind a dead link): the server must not
 * buffer its events without bound. graphql-ws awaits each message's write, so a socket whose writes
 * stop completing stops the subscription's reads from the bus, whose per-subscriber queue is bounded
 * (AIRLOCK_SUBSCRIBER_BUFFER): past it the subscription ends with SUBSCRIBER_OVERFLOW, and the runs
 * are not slowed.
 *
 * Neither test depends on how much the kernel's socket buffers absorb: the runs wait at a gate until
 * every subscription is live; the first test holds the server's writes itself (so it does not depend
 * on the machine's speed either); the second, a real socket that stops reading, sends more than the
 * kernel's buffers can hold whatever their size. Its one limit is graphql-ws's keepalive (a ping
 * every 12 s; a socket that leaves it unanswered for 12 s is closed, and what the server had not
 * written yet is lost): the socket stays paused only while the server writes a few MB and BUFFER
 * events, about a second here, not while the runs finish (which on a loaded machine once took
 * longer than the keepalive and lost the cut-off messages).
 */
describe.each(TEST_DATABASES)('a subscriber that stops reading on %s', (kind) => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    // Not durable: the firehose's transcript grows past several MB over some 150 rounds, and a durable
    // run seals its whole transcript at every round (README, Durable runs: what a checkpoint costs);
    // what this file proves is the bound on a slow reader, and durable runs have their own suite.
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: `${PROBES},${GATE}`, AIRLOCK_SUBSCRIBER_BUFFER: String(BUFFER), AIRLOCK_RESUME_RUNS: 'false' } });
    url = (await t.app.server.start()).url.replace('http://', 'ws://');
  });
  afterAll(() => t.stop());

  it('should be cut off with SUBSCRIBER_OVERFLOW once its queue is full, the server holding one unsent message per subscription, while the runs finish with every step stored', async () => {
    const RUNS = 5;
    // After the gate, more events than the bus queues for a subscriber, twice over.
    const replies = [THROUGH_THE_GATE, ...rounds(2 * (BUFFER + 2), 4, { name: 'probe_large', arguments: { bytes: 1_000 } })];
    const configurationId = await scriptedConfiguration(t, 'stalled', {
      replies,
      finalReply: { content: 'done' },
      maxIterations: replies.length,
      allowedToolGroups: ['probes', 'gates'],
    });
    const openGate = closeGate();
    const client = await connect(url, t.adminToken);
    const stall = holdServerMessages(client.socket);
    try {
      const runIds = await startAndWatch(t, client, configurationId, RUNS);
      // Every stream has sent what the run did before the gate: each now waits for the bus.
      await client.until(() => t.app.services.bus.subscriberCount() === RUNS && runIds.every((_, index) => client.sent(`s${index}`, 'gate_wait')), 'every subscription to be live');
      const seenBefore = client.received.length;
      // From here the server's writes on this socket stop completing, as when the kernel's buffers are full.
      stall.hold();
      openGate();

      await untilRunsSettled(t, client, runIds);
      await client.until(() => t.app.services.bus.subscriberCount() === 0, 'the bus to let go of every subscriber');
      // Bounded: one message per subscription waits for its write, the rest of each run was never queued.
      expect(stall.held()).toBe(RUNS);
      await expectEveryStep(t, runIds, RUNS * stepsOfRun(replies));

      stall.release();
      await client.until(() => runIds.every((_, index) => client.ended(`s${index}`)), 'every subscription to end');
      const after = client.received.slice(seenBefore);
      for (const [index] of runIds.entries()) {
        const own = after.filter((message) => message.id === `s${index}`);
        // The message whose write was held, the BUFFER events queued behind it, then the cut-off.
        expect(own.filter((message) => message.type === 'next')).toHaveLength(1 + BUFFER);
        expectCutOff(own.at(-1));
      }
    } finally {
      stall.release();
      openGate();
      client.socket.close();
    }
  }, 120_000);

  it("should be cut off the same way when its socket stops reading: the kernel's buffers fill, then the server's writes wait", async () => {
    // First more bytes than the kernel can hold for one connection (its receive and send buffers at
    // their largest), in events of the largest tool output a stream carries, so that the server's
    // writes certainly wait; then more events than the bus queues for a subscriber, twice over, so
    // that it is certainly cut off. (A fresh connection's kernel buffers take a few MB: the
    // subscriber is cut off long before the run's end.)
    const bigCalls = Math.ceil(kernelBufferBytes() / MAX_CONTENT_BYTES) + 2;
    const replies = [
      THROUGH_THE_GATE,
      ...rounds(bigCalls, Math.ceil(bigCalls / 30), { name: 'probe_large', arguments: { bytes: MAX_CONTENT_BYTES } }),
      ...rounds(2 * (BUFFER + 2), 12, { name: 'probe_large', arguments: { bytes: 100 } }),
    ];
    const configurationId = await scriptedConfiguration(t, 'firehose', {
      replies,
      finalReply: { content: 'done' },
      // Nothing of the outputs is stored (quick to write); an admin's live stream carries them verbatim.
      privacyLevel: 'METADATA',
      maxIterations: replies.length,
      allowedToolGroups: ['probes', 'gates'],
    });
    const openGate = closeGate();
    const client = await connect(url, t.adminToken);
    try {
      const runIds = await startAndWatch(t, client, configurationId, 1);
      await client.until(() => t.app.services.bus.subscriberCount() === 1 && client.sent('s0', 'gate_wait'), 'the subscription to be live');
      // The client stops reading, and only then does the run go on. graphql-ws's keepalive closes a
      // socket that leaves its ping unanswered for 12 s: the socket is paused only until the bus
      // lets go of the subscriber (a few events past what the kernel absorbed), not for the whole run.
      client.pause();
      openGate();
      await client.until(() => t.app.services.bus.subscriberCount() === 0, 'the bus to let go of the subscriber');
      client.resume();

      await client.until(() => client.ended('s0'), 'the subscription to end');
      expectCutOff(client.received.filter((message) => message.id === 's0').at(-1));
      await untilRunsSettled(t, client, runIds);
      await expectEveryStep(t, runIds, stepsOfRun(replies));
    } finally {
      openGate();
      client.socket.close();
    }
  }, 120_000);
});

/** A graphql-transport-ws client that keeps every message it receives, in order. */
interface Client {
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
  /** Polls `condition` (60 s at most); fails at once, saying so, when the server closed the socket. */
  until(condition: () => boolean | Promise<boolean>, what: string): Promise<void>;
}

async function connect(url: string, token: string): Promise<Client> {
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

/** Starts `count` runs and subscribes to each (`s0`, `s1`, …) as soon as it exists; their ids. */
function startAndWatch(t: TestApp, client: Client, configurationId: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const runId = (await t.gql(START_RUN, { input: { configurationId, prompt: 'flood' } })).data.startRun.id as string;
      client.subscribe(`s${index}`, runId);
      return runId;
    }),
  );
}

/**
 * Holds every message the server sends (graphql-ws's `send`, never called with the callback it
 * awaits) on the test's connection: its writes stop completing, as they do when the kernel's
 * buffers are full, whatever their size. Pings are not messages: the client still answers them, so
 * the server's keepalive never closes the socket however long the machine takes.
 */
function holdServerMessages(client: WebSocket) {
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

/** The most a connection's kernel buffers hold: its receive and send buffers at their autotuned maximum (Linux), else 64 MB. */
function kernelBufferBytes(): number {
  const largest = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
  try {
    return largest('/proc/sys/net/ipv4/tcp_rmem') + largest('/proc/sys/net/ipv4/tcp_wmem');
  } catch {
    return 64 * 1024 * 1024;
  }
}

async function untilRunsSettled(t: TestApp, client: Client, runIds: readonly string[]): Promise<void> {
  const ids = runIds.map((id) => decodeGlobalID(id).id);
  await client.until(async () => {
    const rows = await t.app.services.db.selectFrom('runs').select('status').where('id', 'in', ids).execute();
    return rows.every((row) => row.status === 'COMPLETED');
  }, 'every run to finish while nobody reads');
}

/** Replies that call `call` `count` times, `perRound` calls a reply. */
function rounds(count: number, perRound: number, call: unknown): { content: string; toolCalls: unknown[] }[] {
  return Array.from({ length: Math.ceil(count / perRound) }, (_, round) => ({
    content: '',
    toolCalls: Array.from({ length: Math.min(perRound, count - round * perRound) }, () => call),
  }));
}

/** The steps a run of these replies stores: per reply a REQUEST, an LLM and one TOOL step per call, then the final REQUEST and LLM. */
function stepsOfRun(replies: readonly { toolCalls: readonly unknown[] }[]): number {
  return replies.reduce((steps, reply) => steps + 2 + reply.toolCalls.length, 2);
}

async function expectEveryStep(t: TestApp, runIds: readonly string[], expected: number): Promise<void> {
  const ids = runIds.map((id) => decodeGlobalID(id).id);
  const steps = await t.app.services.db.selectFrom('run_steps').select((eb) => eb.fn.countAll<number>().as('count')).where('run_id', 'in', ids).executeTakeFirstOrThrow();
  expect(Number(steps.count)).toBe(expected);
}

function expectCutOff(message: Received | undefined): void {
  expect(message).toMatchObject({ type: 'error' });
  expect(message!.payload).toEqual([
    expect.objectContaining({
      message: expect.stringMatching(new RegExp(`fell ${BUFFER} events behind and was cut off; subscribe again \\(runEvents replays from storage`)),
      extensions: { code: 'SUBSCRIBER_OVERFLOW' },
    }),
  ]);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

import { fileURLToPath } from 'node:url';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONTENT_BYTES } from '../../src/tools/bounds.ts';
import { startFlood } from '../fixtures/tool-modules/flood.ts';
import { closeGate } from '../fixtures/tool-modules/gate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { answerServerPings, connect, holdServerMessages, kernelBufferBytes, WAIT_MS, type Client, type Received } from './slow-reader.ts';

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const GATE = fileURLToPath(new URL('../fixtures/tool-modules/gate.ts', import.meta.url));
const FLOOD = fileURLToPath(new URL('../fixtures/tool-modules/flood.ts', import.meta.url));
const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { ... on Run { id } } }`;
/** AIRLOCK_SUBSCRIBER_BUFFER here: a subscription is cut off once this many events wait for it. */
const BUFFER = 64;
/** The first reply of every run: it holds the run until the test opens the gate. */
const THROUGH_THE_GATE = { content: '', toolCalls: [{ name: 'gate_wait', arguments: {} }] };

/**
 * A dashboard that stops reading (a frozen tab, a client behind a dead link): the server must not
 * buffer its events without bound. graphql-ws awaits each message's write, so a socket whose writes
 * stop completing stops the subscription's reads from the bus, whose per-subscriber queue is bounded
 * (AIRLOCK_SUBSCRIBER_BUFFER): past it the subscription ends with SUBSCRIBER_OVERFLOW, and the runs
 * are not slowed.
 *
 * Neither test depends on how much the kernel's socket buffers absorb, nor on how fast the machine
 * is: the runs wait at a gate until every subscription is live; the first test holds the server's
 * writes itself; the second, a real socket that stops reading, is sent more than the kernel's
 * buffers can hold whatever their size, and the server's keepalive pings are answered on its
 * behalf (a paused reader cannot answer them: unanswered for 12 s, graphql-ws closed it on a loaded
 * machine and lost the messages the test waited for). Every wait is for a state, never for a time;
 * its deadline (WAIT_MS) only names a hang.
 */
describe.each(TEST_DATABASES)('a subscriber that stops reading on %s', (kind) => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    // Not durable: the firehose's transcript grows past several MB over some 150 rounds, and a durable
    // run seals its whole transcript at every round (docs/scaling.md, Durable runs: what a checkpoint costs);
    // what this file proves is the bound on a slow reader, and durable runs have their own suite.
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: `${PROBES},${GATE},${FLOOD}`, AIRLOCK_SUBSCRIBER_BUFFER: String(BUFFER), AIRLOCK_RESUME_RUNS: 'false' } });
    url = (await t.app.server.start()).url.replace('http://', 'ws://');
    // Past the suite's 60 s hook timeout: PGlite's start once took longer with the machine's two cores at load 28.
  }, 2 * WAIT_MS);
  afterAll(() => t?.stop());

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
      client.socket.terminate();
    }
  }, 4 * WAIT_MS);

  it("should be cut off the same way when its socket stops reading: the kernel's buffers fill, then the server's writes wait", async () => {
    // First more bytes than the kernel can hold for one connection (its receive and send buffers at
    // their largest), in events of the largest tool output a stream carries, so that the server's
    // writes certainly wait; then more events than the bus queues for a subscriber, twice over, so
    // that it is certainly cut off. A fresh connection's buffers take a few MB, so the subscriber is
    // cut off early in the flood; the flood's events then shrink to a byte (startFlood), and the run
    // finishes without pushing tens of MB that nobody reads.
    const floodCalls = Math.ceil(kernelBufferBytes() / MAX_CONTENT_BYTES) + 2;
    const replies = [
      THROUGH_THE_GATE,
      ...rounds(floodCalls, Math.ceil(floodCalls / 30), { name: 'flood_chunk', arguments: {} }),
      ...rounds(2 * (BUFFER + 2), 12, { name: 'probe_large', arguments: { bytes: 100 } }),
    ];
    const configurationId = await scriptedConfiguration(t, 'firehose', {
      replies,
      finalReply: { content: 'done' },
      // Nothing of the outputs is stored (quick to write); an admin's live stream carries them verbatim.
      privacyLevel: 'METADATA',
      maxIterations: replies.length,
      allowedToolGroups: ['probes', 'gates', 'floods'],
    });
    const openGate = closeGate();
    const stopFlood = startFlood();
    const client = await connect(url, t.adminToken);
    // From the start, not from the pause: a ping sent just before it would otherwise go unanswered.
    const stopAnswering = answerServerPings(client.socket);
    try {
      const runIds = await startAndWatch(t, client, configurationId, 1);
      await client.until(() => t.app.services.bus.subscriberCount() === 1 && client.sent('s0', 'gate_wait'), 'the subscription to be live');
      // The client stops reading, and only then does the run go on.
      client.pause();
      openGate();
      await client.until(() => t.app.services.bus.subscriberCount() === 0, 'the bus to let go of the subscriber');
      stopFlood();
      client.resume();

      await client.until(() => client.ended('s0'), 'the subscription to end');
      expectCutOff(client.received.filter((message) => message.id === 's0').at(-1));
      await untilRunsSettled(t, client, runIds);
      await expectEveryStep(t, runIds, stepsOfRun(replies));
    } finally {
      stopAnswering();
      stopFlood();
      openGate();
      client.socket.terminate();
    }
  }, 4 * WAIT_MS);
});

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

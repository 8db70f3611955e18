import { fileURLToPath } from 'node:url';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_EVENTS, scriptedConfiguration } from '../helpers/runs.ts';

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { ... on Run { id } } }`;
/**
 * 20 runs × 50 tool steps of 50 KB = 50 MB for the admin's verbatim stream: more than loopback's
 * buffers can absorb once the client stops reading (a receive window that autotunes up to
 * tcp_rmem's 32 MB here, plus a 4 MB send buffer). With 8 runs (20 MB) a full suite once saw every
 * subscription complete without overflowing, most likely because the kernel had taken it all.
 */
const RUNS = 20;

interface Received {
  readonly id: string;
  readonly type: string;
  readonly payload?: unknown;
}

/**
 * A dashboard whose socket stops reading (a frozen tab, a client behind a dead link): the server
 * must not buffer its events without bound. graphql-ws awaits each frame's write, so the socket's
 * backpressure reaches the bus, whose per-subscriber queue is bounded (AIRLOCK_SUBSCRIBER_BUFFER):
 * past it the subscription ends with SUBSCRIBER_OVERFLOW, and the runs are not slowed.
 */
describe.each(TEST_DATABASES)('a subscriber that stops reading on %s', (kind) => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: PROBES, AIRLOCK_SUBSCRIBER_BUFFER: '10' } });
    url = (await t.app.server.start()).url.replace('http://', 'ws://');
  });
  afterAll(() => t.stop());

  it('should be cut off with SUBSCRIBER_OVERFLOW once its queue is full, while the runs finish with every step stored', async () => {
    const configurationId = await scriptedConfiguration(t, 'firehose', {
      replies: Array.from({ length: 50 }, () => ({ content: '', toolCalls: [{ name: 'probe_large', arguments: { bytes: 50_000 } }] })),
      finalReply: { content: 'done' },
      // Slow enough that every subscription is on the bus before its run gets far.
      delayMs: 30,
      // Nothing of the 50 KB outputs is stored (quick to write); an admin's live stream carries them verbatim.
      privacyLevel: 'METADATA',
      maxIterations: 50,
      allowedToolGroups: ['probes'],
    });
    const socket = new WebSocket(url, 'graphql-transport-ws');
    const received: Received[] = [];
    socket.on('message', (data) => received.push(JSON.parse(String(data)) as Received));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.adminToken}` } }));
    await until(() => received.some((message) => message.type === 'connection_ack'), 'the ack');
    // Each run is watched as soon as it exists, so that it is still going when its subscription is live.
    const started = await Promise.all(
      Array.from({ length: RUNS }, async (_, index) => {
        const runId = (await t.gql(START_RUN, { input: { configurationId, prompt: 'flood' } })).data.startRun.id as string;
        socket.send(JSON.stringify({ id: `s${index}`, type: 'subscribe', payload: { query: textOf(RUN_EVENTS), variables: { runId } } }));
        return runId;
      }),
    );
    // A subscription is live once its first event came (the bus's count alone would wait forever for a
    // run a loaded machine let finish before its subscription arrived: that one replays from storage).
    await until(() => started.every((_, index) => received.some((message) => message.id === `s${index}`)), 'every subscription to be live');
    // The client stops reading: the kernel buffers fill, then the server's writes wait.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();

    const ids = started.map((id) => decodeGlobalID(id).id);
    await until(async () => {
      const rows = await t.app.services.db.selectFrom('runs').select('status').where('id', 'in', ids).execute();
      return rows.every((row) => row.status === 'COMPLETED');
    }, 'every run to finish while nobody reads');
    await until(() => t.app.services.bus.subscriberCount() === 0, 'the bus to let go of every subscriber');
    const steps = await t.app.services.db.selectFrom('run_steps').select((eb) => eb.fn.countAll<number>().as('count')).where('run_id', 'in', ids).executeTakeFirstOrThrow();
    expect(Number(steps.count)).toBeGreaterThanOrEqual(RUNS * 100);

    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(() => new Set(received.filter((message) => message.type === 'error' || message.type === 'complete').map((message) => message.id)).size === RUNS, 'every subscription to end', 60_000);
    const overflowed = received.filter((message) => message.type === 'error');
    expect(overflowed.length).toBeGreaterThan(0);
    for (const message of overflowed) {
      expect(message.payload).toEqual([
        expect.objectContaining({ message: expect.stringMatching(/fell 10 events behind and was cut off; subscribe again \(runEvents replays from storage/), extensions: { code: 'SUBSCRIBER_OVERFLOW' } }),
      ]);
    }
    socket.close();
  }, 120_000);
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

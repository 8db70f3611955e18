import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { collect, RUN_AGENT, RUN_EVENTS, wsClient } from '../helpers/runs.ts';
import { startServedApp } from '../helpers/served-app.ts';
import { eventually, RawSocket, type WireMessage } from '../protocol/raw-socket.ts';

/**
 * Load at the size `npm test` can afford: 40 clients running agent runs back to back while 200
 * idle dashboards watch another run, for a few seconds. The large scenario (200 runs, 1 000
 * subscriptions, 60 s) belongs in bench/.
 */

const CLIENTS = 40;
const WATCHERS = 200;
const WATCHER_SOCKETS = 10;
const LOAD_MS = 4_000;
/** Generous: the test process holds the server AND every client; a leak grows without bound. */
const RSS_GROWTH_LIMIT_MB = 400;

const EXPECTED_STEPS = ['1:REQUEST', '2:LLM', '3:TOOL', '4:REQUEST', '5:LLM'];

describe.each(TEST_DATABASES)('load on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let quick: string;
  let anchor: string;

  beforeAll(async () => {
    ({ t, url, configurations: { quick, anchor } } = await startServedApp(kind, {
      quick: {
        replies: [{ content: 'x', toolCalls: [{ name: 'describe_tables', arguments: {} }] }, { content: 'done' }],
        delayMs: 10,
      },
      // The run the idle dashboards watch: one round every ~300 ms, far longer than the load lasts.
      anchor: {
        replies: [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }],
        delayMs: 300,
        maxIterations: 50,
        privacyLevel: 'FULL',
      },
    }));
  });
  afterAll(() => t.stop());

  it(`should serve ${CLIENTS} clients running agent runs and ${WATCHERS} idle runEvents subscriptions with no error, no lost step and bounded memory`, async () => {
    const bus = t.app.services.bus;
    const busBefore = bus.subscriberCount();
    const owner = await RawSocket.open(url, t.adminToken);
    owner.subscribe('anchor', RUN_AGENT, { input: { configurationId: anchor, prompt: 'keep going' } });
    const anchorRunId = (await owner.next((message) => message.id === 'anchor')).payload.data.runAgent.run.id as string;

    const watchers = await Promise.all(Array.from({ length: WATCHER_SOCKETS }, () => RawSocket.open(url, t.adminToken)));
    const perSocket = WATCHERS / WATCHER_SOCKETS;
    const watched = watchers.flatMap((socket) =>
      Array.from({ length: perSocket }, (_, index) => {
        socket.subscribe(`w${index}`, RUN_EVENTS, { runId: anchorRunId });
        return socket.operation(`w${index}`, 60_000);
      }),
    );
    await eventually(() => bus.subscriberCount(), (count) => count >= busBefore + 1 + WATCHERS);

    const clients = Array.from({ length: CLIENTS }, () => wsClient(url, t.adminToken));
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
    const deadline = Date.now() + LOAD_MS;
    const received = new Map<string, string[]>();
    const failures: unknown[] = [];
    try {
      await Promise.all(
        clients.map(async (client, index) => {
          while (Date.now() < deadline) {
            try {
              const events = await collect(client, RUN_AGENT, { input: { configurationId: quick, prompt: `load ${index}` } });
              const finished = events.at(-1);
              expect(finished).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
              received.set(
                member(finished, 'RunFinishedEvent').run.id,
                events.filter((event) => event.__typename === 'RunStepEvent').map((event) => `${event.step.sequence}:${event.step.kind}`),
              );
            } catch (error) {
              failures.push(error);
              return;
            }
          }
        }),
      );
    } finally {
      clearInterval(sampler);
      await Promise.all(clients.map((client) => client.dispose()));
    }
    const rssGrowthMb = (rssPeak - rssBefore) / 1e6;
    console.log(
      `load on ${kind}: ${received.size} runs by ${CLIENTS} clients in ${LOAD_MS} ms with ${WATCHERS} idle subscriptions; ` +
        `RSS ${(rssBefore / 1e6).toFixed(0)} MB → peak ${(rssPeak / 1e6).toFixed(0)} MB (+${rssGrowthMb.toFixed(0)} MB)`,
    );
    expect(failures).toEqual([]);
    expect(received.size).toBeGreaterThanOrEqual(CLIENTS);

    // Every run: the client saw each step once, in order, and storage holds exactly those steps.
    const ids = [...received.keys()].map((id) => Buffer.from(id, 'base64').toString('utf8').split(':')[1]!);
    const rows = await t.app.services.db.selectFrom('run_steps').select(['run_id', 'sequence', 'kind']).where('run_id', 'in', ids).orderBy('run_id').orderBy('sequence').execute();
    const stored = new Map<string, string[]>();
    for (const row of rows) stored.set(row.run_id, [...(stored.get(row.run_id) ?? []), `${row.sequence}:${row.kind}`]);
    for (const [globalId, steps] of received) {
      expect(steps).toEqual(EXPECTED_STEPS);
      expect(stored.get(Buffer.from(globalId, 'base64').toString('utf8').split(':')[1]!)).toEqual(EXPECTED_STEPS);
    }
    const runs = await t.app.services.db.selectFrom('runs').select(['status', 'audit_incomplete']).where('id', 'in', ids).execute();
    expect(runs.filter((run) => run.status !== 'COMPLETED' || run.audit_incomplete)).toEqual([]);

    // The watchers: every one saw the anchor's steps in order, then its end, once cancelled.
    await t.gql(`mutation($id: ID!) { cancelRun(id: $id) { __typename } }`, { id: anchorRunId });
    const watchedRuns = await Promise.all(watched);
    const anchorSteps = (
      await t.app.services.db.selectFrom('run_steps').select(['sequence']).where('run_id', '=', Buffer.from(anchorRunId, 'base64').toString('utf8').split(':')[1]!).orderBy('sequence').execute()
    ).map((row) => row.sequence);
    expect(anchorSteps.length).toBeGreaterThan(3);
    for (const messages of watchedRuns) {
      expect(messages.at(-1)!.type).toBe('complete');
      const events = messages.filter((message: WireMessage) => message.type === 'next').map((message) => message.payload.data.runEvents);
      expect(events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step.sequence)).toEqual(anchorSteps);
      expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'CANCELLED' } });
    }
    for (const socket of [...watchers, owner]) await socket.close();
    await eventually(() => bus.subscriberCount(), (count) => count === busBefore);

    const errors = t.logs.lines.filter((line) => JSON.parse(line).level >= 50);
    expect(errors).toEqual([]);
    expect(rssGrowthMb).toBeLessThan(RSS_GROWTH_LIMIT_MB);
  }, 90_000);
});

import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DbKind } from '../../src/db/create-db.ts';
import type { RunRow } from '../../src/db/database.ts';
import { insertRun } from '../../src/db/repositories/runs.ts';
import type { StoredStep } from '../../src/runtime/stored-step.ts';
import { followRun } from '../../src/services/run-stream.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { textOf, type TypedDocumentNode } from '../helpers/documents.ts';
import { follow, oneToN, type Followed } from '../helpers/instances.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.ts';
import { RUN_EVENTS, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';

/**
 * A watcher never receives a run's end (or a later step) before every stored step: steps stored
 * but never published (their instance died between commit and publication, or the bus lost them)
 * are read from storage and delivered first, in order, each once. The steps here are written
 * through the real group-commit writer and published (or not) on the real bus; the run is settled
 * by the real stale-heartbeat sweep, which publishes only its end.
 */

/** What a watcher of `runEvents` saw, whatever carries it (graphql-ws or server-sent events). */
type Watch = (runId: string) => Followed<RunEvent>;

const sequences = (events: readonly RunEvent[]) => stepsOf(events).map((step) => step.sequence);
const contents = (events: readonly RunEvent[]) => stepsOf(events).map((step) => step.content);

/** An LLM step at FULL privacy: its content names its sequence, so a delivered step can be told from another. */
const stepAt = (sequence: number): StoredStep => ({
  kind: 'LLM',
  round: sequence,
  durationMs: 3,
  content: `step ${sequence}`,
  contentRedacted: false,
  contentLength: `step ${sequence}`.length,
  usage: { promptTokens: 10, completionTokens: 5, cost: 0 },
});

/** The instance that drives a run here: stores its steps, publishes the ones it lives to publish. */
function driverOn(t: TestApp, run: RunRow) {
  const { writer, bus } = t.app.services;
  const store = async (sequence: number) => {
    const written = writer.insertStep({ runId: run.id, sequence, kind: 'LLM', round: sequence, durationMs: 3, payload: stepAt(sequence) });
    writer.expedite();
    await written;
  };
  return {
    /** Committed, never published (the instance died before, or the bus lost it). */
    storeSilently: store,
    /** The park as the recorder announces it (the stream reads only the event). */
    announcePark() {
      const call = { id: 'call-1', name: 'update_record', arguments: {} };
      bus.publish({ type: 'suspended', runId: run.id, calls: [call], previews: [], digest: 'turn-digest', run: { ...run, status: 'WAITING_FOR_APPROVAL' } });
    },
    async storeAndPublish(sequence: number) {
      await store(sequence);
      const step = stepAt(sequence);
      bus.publish({
        type: 'step',
        runId: run.id,
        sequence,
        stateVersion: run.state_version,
        progress: { iterations: sequence, usage: { promptTokens: 10 * sequence, completionTokens: 5 * sequence, cost: 0 } },
        full: step,
        filtered: step,
      });
    },
  };
}

/** A RUNNING run nobody in these processes drives (no heartbeat renews it). */
const insertOrphan = (t: TestApp) =>
  insertRun(t.app.services.db, { id: randomUUID(), configuration_id: null, user_id: null, status: 'RUNNING', prompt: 'watched', privacy_level: 'FULL', tool_selection: null });

/** What the heartbeat sweep does once a run's process is silent for 3 beats: settle it INTERRUPTED and publish its end (only its end). */
async function settleByTheSweep(t: TestApp, runId: string): Promise<void> {
  await sql`update runs set heartbeat_at = now() - interval '1 hour' where id = ${runId}`.execute(t.app.services.db);
  // This call, or the app's own periodic sweep if it came first (on a loaded machine it may): either
  // way the run is settled once, which the watcher's single RunFinishedEvent checks.
  await t.app.services.runHost.settleStale();
  const row = await t.app.services.db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow();
  expect(row.status).toBe('FAILED');
}

/**
 * Replay 1–2, live 3, silent 4–5, live 6 (a jump: 4 and 5 come from storage first), silent 7, a
 * park, silent 8, then the sweep's end: the watcher receives 1…7, the park, 8 and the end, each
 * step once, with its stored content.
 */
async function watchThroughGapsToTheEnd(driving: TestApp, settling: TestApp, watch: Watch): Promise<void> {
  const run = await insertOrphan(driving);
  const driver = driverOn(driving, run);
  await driver.storeSilently(1);
  await driver.storeSilently(2);
  const watching = watch(run.id);
  await watching.until((events) => sequences(events).length === 2, 'the replay of steps 1 and 2');
  await driver.storeAndPublish(3);
  await watching.until((events) => sequences(events).includes(3), 'live step 3');
  await driver.storeSilently(4);
  await driver.storeSilently(5);
  await driver.storeAndPublish(6);
  await watching.until((events) => sequences(events).includes(6), 'live step 6');
  expect(sequences(watching.events)).toEqual(oneToN(6));

  await driver.storeSilently(7);
  driver.announcePark();
  await watching.until((events) => events.some((event) => event.__typename === 'RunSuspendedEvent'), 'the park');
  expect(sequences(watching.events)).toEqual(oneToN(7));
  expect(watching.events.at(-1)).toMatchObject({ __typename: 'RunSuspendedEvent', turnDigest: 'turn-digest' });

  await driver.storeSilently(8);
  await settleByTheSweep(settling, run.id);
  expect(await watching.ended).toBeNull();
  expect(sequences(watching.events)).toEqual(oneToN(8));
  expect(contents(watching.events)).toEqual(oneToN(8).map((sequence) => `step ${sequence}`));
  expect(watching.events.map((event) => event.__typename).filter((name) => name !== 'RunStepEvent')).toEqual(['RunStartedEvent', 'RunSuspendedEvent', 'RunFinishedEvent']);
  expect(watching.events.findIndex((event) => event.__typename === 'RunSuspendedEvent')).toBe(1 + 7);
  expect(watching.events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'FAILED', terminationReason: 'INTERRUPTED' } });
}

/** `runEvents` over graphql-ws. */
function overWebSocket(url: string, token: string): { watch: Watch; dispose(): Promise<void> } {
  const client = wsClient(url, token);
  return {
    watch: (runId) => follow(client, RUN_EVENTS, { runId }, (data) => data.runEvents as RunEvent),
    dispose: () => client.dispose() as Promise<void>,
  };
}

/** `runEvents` over server-sent events (graphql-yoga's SSE transport), read as the bytes arrive. */
function overServerSentEvents(url: string, token: string): { watch: Watch; dispose(): Promise<void> } {
  const aborts: AbortController[] = [];
  const watch: Watch = (runId) => {
    const abort = new AbortController();
    aborts.push(abort);
    const events: RunEvent[] = [];
    let done = false;
    const ended = (async (): Promise<unknown> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: textOf(RUN_EVENTS as TypedDocumentNode<any, any>), variables: { runId } }),
        signal: abort.signal,
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done: closed } = await reader.read();
        if (closed) return null;
        buffer += value;
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          for (const line of block.split('\n')) {
            if (!line.startsWith('data: ') || line.length <= 6) continue;
            const payload = JSON.parse(line.slice(6)) as { data?: { runEvents: RunEvent }; errors?: unknown };
            if (payload.errors) return payload.errors;
            if (payload.data) events.push(payload.data.runEvents);
          }
        }
      }
    })().catch((error: unknown) => error);
    void ended.then(() => (done = true));
    return {
      events,
      ended,
      stop: () => abort.abort(),
      async until(predicate, what, timeoutMs = 20_000) {
        const deadline = Date.now() + timeoutMs;
        while (!predicate(events)) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events).slice(0, 2_000)}`);
          if (done && !predicate(events)) throw new Error(`the stream ended before ${what}: ${JSON.stringify(await ended)}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
    };
  };
  return {
    watch,
    async dispose() {
      for (const abort of aborts) abort.abort();
    },
  };
}

const TRANSPORTS = { 'graphql-ws': overWebSocket, 'server-sent events': overServerSentEvents } as const;

/** A long heartbeat: nothing but the test settles the orphaned runs. */
const QUIET_SWEEP = { AIRLOCK_RUN_HEARTBEAT_MS: '600000' };

describe.each(TEST_DATABASES)('a watcher receives every stored step before the run’s end, on %s', (kind: DbKind) => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: QUIET_SWEEP });
    ({ url } = await t.app.server.start());
  });
  afterAll(async () => {
    await t?.stop();
  });

  for (const [transport, open] of Object.entries(TRANSPORTS)) {
    it(`should fill the gaps from storage before a later step and before the end, over ${transport}`, async () => {
      const watcher = open(url, t.adminToken);
      try {
        await watchThroughGapsToTheEnd(t, t, watcher.watch);
      } finally {
        await watcher.dispose();
      }
    });
  }

  it('should end a watcher whose run was settled by a process that died before publishing the end: the run host’s sweep delivers it from storage', async () => {
    const run = await insertOrphan(t);
    const driver = driverOn(t, run);
    const watcher = overWebSocket(url, t.adminToken);
    try {
      const watching = watcher.watch(run.id);
      await driver.storeAndPublish(1);
      await watching.until((events) => sequences(events).includes(1), 'live step 1');
      // Step 2 and the end committed, the process gone before it published either (its own
      // event had its time: the end is a minute old).
      await driver.storeSilently(2);
      await sql`update runs set status = 'COMPLETED', termination_reason = 'COMPLETED', final_content = 'stored answer', finished_at = now() - interval '1 minute' where id = ${run.id}`.execute(t.app.services.db);
      await t.app.services.runHost.settleStale();
      expect(await watching.ended).toBeNull();
      expect(sequences(watching.events)).toEqual([1, 2]);
      expect(watching.events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    } finally {
      await watcher.dispose();
    }
  });

  it('should deliver the steps stored before a settlement that lands between its replay and its read of the run', async () => {
    const run = await insertOrphan(t);
    const driver = driverOn(t, run);
    await driver.storeSilently(1);
    const { runHost, db } = t.app.services;
    let replays = 0;
    // The watcher's first read of storage sees step 1; steps 2 and 3 and the settlement commit
    // before it reads the run (the order a watcher joining at the very end can meet).
    const racing = {
      ...runHost,
      replay: async (runId: string, afterSequence: number) => {
        const stored = await runHost.replay(runId, afterSequence);
        if (replays++ === 0) {
          await driver.storeSilently(2);
          await driver.storeSilently(3);
          await settleByTheSweep(t, run.id);
        }
        return stored;
      },
    };
    const viewer = { id: randomUUID(), name: 'admin', isAdmin: true };
    const delivered = [];
    for await (const event of await followRun({ db, runHost: racing }, viewer, run.id)) delivered.push(event);
    expect(delivered.map((event) => (event.kind === 'step' ? event.view.sequence : event.kind))).toEqual(['started', 1, 2, 3, 'finished']);
    expect(delivered.at(-1)).toMatchObject({ kind: 'finished', run: { status: 'FAILED', termination_reason: 'INTERRUPTED' } });
  });

  it('should read storage once for all the watchers of this process that wait on the same end', async () => {
    const run = await insertOrphan(t);
    const driver = driverOn(t, run);
    const { runHost, db } = t.app.services;
    const reads: number[] = [];
    const counting = { ...runHost, replay: (runId: string, afterSequence: number) => (reads.push(afterSequence), runHost.replay(runId, afterSequence)) };
    const viewer = { id: randomUUID(), name: 'admin', isAdmin: true };
    const watchers = await Promise.all(Array.from({ length: 20 }, () => followRun({ db, runHost: counting }, viewer, run.id)));
    const received = watchers.map(() => [] as number[]);
    const draining = watchers.map(async (stream, index) => {
      for await (const event of stream) if (event.kind === 'step') received[index]!.push(event.view.sequence);
    });
    await driver.storeAndPublish(1);
    await vi.waitFor(() => expect(received.every((sequences) => sequences.length === 1)).toBe(true), { timeout: 20_000, interval: 20 });
    await driver.storeSilently(2);
    await driver.storeSilently(3);
    await settleByTheSweep(t, run.id);
    await Promise.all(draining);
    for (const sequences of received) expect(sequences).toEqual([1, 2, 3]);
    expect(reads.filter((afterSequence) => afterSequence > 0)).toEqual([1]);
  });
});

/**
 * Two instances on one PostgreSQL and one Redis (in this process): A stores the steps and dies
 * before publishing the last ones; B's sweep settles the run; a watcher on B receives them all
 * before the end.
 */
describe.skipIf(!TEST_REDIS_URL || !process.env.TEST_DATABASE_URL)('a watcher on B receives every step A stored before the end B’s sweep published', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let urlOfB: string;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const shared = {
      ...QUIET_SWEEP,
      AIRLOCK_ADMIN_TOKEN: `gaps-admin-${randomBytes(12).toString('hex')}`,
      AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_URL: TEST_REDIS_URL!,
      AIRLOCK_REDIS_PREFIX: uniquePrefix('gaps'),
    };
    a = await startTestApp('postgres', { database, keepDatabase: true, env: shared });
    b = await startTestApp('postgres', { database, keepDatabase: true, env: shared });
    ({ url: urlOfB } = await b.app.server.start());
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('should fill the gaps from storage on B, before a later step from A and before the end', async () => {
    const watcher = overWebSocket(urlOfB, b.adminToken);
    try {
      await watchThroughGapsToTheEnd(a, b, watcher.watch);
    } finally {
      await watcher.dispose();
    }
  });
});

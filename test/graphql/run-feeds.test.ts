import { decodeGlobalID } from '@pothos/plugin-relay';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { graphql } from '../gql/gql.ts';
import type { ApprovalFeedEventFieldsFragment, RunUpdateFieldsFragment } from '../gql/graphql.ts';
import { randomUUID } from 'node:crypto';
import type { RunRow } from '../../src/db/database.ts';
import { findRunsByIds } from '../../src/db/repositories/runs.ts';
import { runUpdates, type RunUpdate } from '../../src/services/run-feeds.ts';
import { deliverLostEnds } from '../../src/services/run-host/lost-ends.ts';
import { NO_RUN_FILTER } from '../../src/services/run-filter.ts';
import { SubscriberOverflowError, type RunBusEventDraft } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { leasedRun } from '../services/run-host/fixture.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member, textOf } from '../helpers/documents.ts';
import { collect, RUN_AGENT, scriptedConfiguration, sseEvents, wsClient } from '../helpers/runs.ts';

const RUN_UPDATE_FIELDS = graphql(`
  fragment RunUpdateFields on RunUpdate {
    snapshot
    run { id status iterations createdAt finishedAt usage { totalTokens estimatedCost } configuration { id } user { name } }
  }
`);
const RUN_UPDATES = graphql(`
  subscription FeedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { ...RunUpdateFields } }
`);
const APPROVAL_FEED_FIELDS = graphql(`
  fragment ApprovalFeedEventFields on ApprovalRequestEvent {
    kind snapshot turnDigest approved decidedBy { name }
    run { id status user { name } }
    pendingCalls { name preview }
  }
`);
const APPROVAL_REQUESTS = graphql(`
  subscription FeedApprovalRequests { approvalRequests { ...ApprovalFeedEventFields } }
`);
const CREATE_USERS = graphql(`
  mutation FeedCreateUsers {
    a: createUser(input: { name: "feed-alice" }) { __typename ... on CreateUserPayload { token user { id } } }
    b: createUser(input: { name: "feed-bob" }) { __typename ... on CreateUserPayload { token user { id } } }
  }
`);
const GRANT_WRITE = graphql(`
  mutation FeedGrantWrite($a: ID!, $b: ID!) {
    x: grantTable(userId: $a, table: "customers", mode: WRITE) { __typename }
    y: grantTable(userId: $b, table: "customers", mode: WRITE) { __typename }
  }
`);
const ENABLE_TOOL = graphql(`
  mutation FeedEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }
`);
const APPROVE = graphql(`
  mutation FeedApprove($id: ID!, $digest: String!, $approved: Boolean!) {
    approveRun(id: $id, turnDigest: $digest, approved: $approved) { __typename ... on Run { id } ... on Error { message } }
  }
`);
const CANCEL = graphql(`
  mutation FeedCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id status } ... on Error { message } } }
`);

type Update = RunUpdateFieldsFragment;
type ApprovalEvent = ApprovalFeedEventFieldsFragment;
const SETTLED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** An endless subscription: collects events until disposed; `until` waits for a condition on them. */
function watch<T>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const events: T[] = [];
  let failure: unknown = null;
  const listeners = new Set<() => void>();
  const stop = client.subscribe(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) failure = result.errors;
        else events.push(Object.values(result.data as Record<string, T>)[0]!);
        for (const listener of listeners) listener();
      },
      error: (error) => {
        failure = error;
        for (const listener of listeners) listener();
      },
      complete: () => {},
    },
  );
  const until = (condition: (seen: T[]) => boolean): Promise<T[]> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (failure) return reject(new Error(JSON.stringify(failure)));
        if (condition(events)) {
          listeners.delete(check);
          resolve(events);
        }
      };
      listeners.add(check);
      check();
    });
  return { events, until, stop };
}

/** Per run, the updates in the order they came. */
function byRun(updates: readonly Update[]): Map<string, Update[]> {
  const runs = new Map<string, Update[]>();
  for (const update of updates) runs.set(update.run.id, [...(runs.get(update.run.id) ?? []), update]);
  return runs;
}

const allSettled = (ids: readonly string[]) => (updates: readonly Update[]) => {
  const runs = byRun(updates);
  return ids.every((id) => SETTLED.has(runs.get(id)?.at(-1)?.run.status ?? ''));
};

describe.each(TEST_DATABASES)('live list feeds (runUpdates, approvalRequests) on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let quick: string;
  let slow: string;
  let busy: string;
  let editor: string;
  const clients: Client[] = [];
  const client = (token: string) => {
    const created = wsClient(url, token);
    clients.push(created);
    return created;
  };
  /** Starts a run over graphql-ws and resolves with its id once it started (the run goes on). */
  const start = (token: string, configurationId: string) =>
    new Promise<{ id: string; done: Promise<unknown> }>((resolve, reject) => {
      let resolved = false;
      const done = collect(client(token), RUN_AGENT, { input: { configurationId, prompt: 'go' } }, (event) => {
        if (!resolved && event.__typename === 'RunStartedEvent') {
          resolved = true;
          resolve({ id: event.run.id, done });
        }
      }).catch(reject);
    });

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    await t.gql(ENABLE_TOOL, { name: 'update_record' });
    const users = (await t.gql(CREATE_USERS)).data;
    const [a, b] = [member(users?.a, 'CreateUserPayload'), member(users?.b, 'CreateUserPayload')];
    alice = { token: a.token, id: a.user.id };
    bob = { token: b.token, id: b.user.id };
    await t.gql(GRANT_WRITE, { a: alice.id, b: bob.id });
    quick = await scriptedConfiguration(t, 'feed-quick', { replies: [{ content: 'done' }] });
    slow = await scriptedConfiguration(t, 'feed-slow', { replies: [{ content: 'done' }], delayMs: 120 });
    // Many fast steps: 30 tool rounds, then the answer.
    const round = { content: 'again', toolCalls: [{ name: 'describe_tables', arguments: {} }] };
    busy = await scriptedConfiguration(t, 'feed-busy', {
      replies: [...Array.from({ length: 30 }, () => round), { content: 'done' }],
      delayMs: 8,
      maxIterations: 40,
      allowedToolGroups: ['structure'],
    });
    const rename = { content: 'renaming', toolCalls: [{ name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: '3' }, changes: { name: 'Renamed' } } }] };
    editor = await scriptedConfiguration(t, 'feed-editor', { replies: [rename, { content: 'renamed' }], privacyLevel: 'FULL', allowedToolGroups: ['editing'] });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t.stop();
  });

  it("should show a user only their own runs and an admin everyone's, snapshot first, each run's final state exactly once and last", async () => {
    // Runs that started before anyone watched (one still running while the snapshot is read).
    const before = [await start(alice.token, slow), await start(t.adminToken, quick)];
    const aliceFeed = watch<Update>(client(alice.token), textOf(RUN_UPDATES), { filter: { configurationId: null } });
    const adminFeed = watch<Update>(client(t.adminToken), textOf(RUN_UPDATES));
    // More runs while the snapshots are read and after.
    const during = await Promise.all([start(alice.token, slow), start(alice.token, quick), start(t.adminToken, slow), start(bob.token, quick)]);
    const all = [...before, ...during];
    await Promise.all(all.map((run) => run.done));
    const aliceRuns = [before[0]!.id, during[0]!.id, during[1]!.id];
    await aliceFeed.until(allSettled(aliceRuns));
    await adminFeed.until(allSettled(all.map((run) => run.id)));

    for (const feed of [aliceFeed.events, adminFeed.events]) {
      const firstLive = feed.findIndex((update) => !update.snapshot);
      expect(feed.slice(firstLive === -1 ? feed.length : firstLive).every((update) => !update.snapshot)).toBe(true);
    }
    expect(aliceFeed.events.every((update) => update.run.user?.name === 'feed-alice')).toBe(true);
    expect(new Set(aliceFeed.events.map((update) => update.run.id))).toEqual(new Set(aliceRuns));
    for (const [feed, ids] of [
      [aliceFeed.events, aliceRuns],
      [adminFeed.events, all.map((run) => run.id)],
    ] as const) {
      const runs = byRun(feed);
      for (const id of ids) {
        const updates = runs.get(id)!;
        expect(updates.filter((update) => SETTLED.has(update.run.status))).toHaveLength(1);
        expect(updates.at(-1)!.run.status).toBe('COMPLETED');
        expect(updates.at(-1)!.run.finishedAt).not.toBeNull();
      }
    }
    aliceFeed.stop();
    adminFeed.stop();
  });

  it('should respect the filter (configuration and status), telling a run that leaves it once', async () => {
    const feed = watch<Update>(client(t.adminToken), textOf(RUN_UPDATES), { filter: { configurationId: slow, status: ['RUNNING'] } });
    const other = await start(t.adminToken, quick);
    const watched = await start(t.adminToken, slow);
    await Promise.all([other.done, watched.done]);
    await feed.until((updates) => updates.some((update) => update.run.id === watched.id && update.run.status === 'COMPLETED'));
    expect(feed.events.every((update) => update.run.configuration?.id === slow)).toBe(true);
    const mine = feed.events.filter((update) => update.run.id === watched.id);
    expect(mine.at(0)!.run.status).toBe('RUNNING');
    expect(mine.at(-1)!.run.status).toBe('COMPLETED');
    expect(mine.filter((update) => update.run.status !== 'RUNNING')).toHaveLength(1);
    expect(feed.events.some((update) => update.run.id === other.id)).toBe(false);
    feed.stop();
  });

  it('should coalesce a run with many fast steps to at most one update per 250 ms, with its progress and final state', async () => {
    const feed = watch<Update>(client(t.adminToken), textOf(RUN_UPDATES), { filter: { configurationId: busy } });
    await feed.until((updates) => updates.length >= 0);
    const run = await start(t.adminToken, busy);
    const events = (await run.done) as unknown[];
    const updates = (await feed.until(allSettled([run.id]))).filter((update) => update.run.id === run.id && !update.snapshot);
    const final = updates.at(-1)!.run;
    expect(final.status).toBe('COMPLETED');
    expect(final.iterations).toBe(31);
    // The run's own lifetime bounds the windows: one update may open it, one per 250 ms window
    // while it runs, and the trailing one after its end.
    const lifetime = new Date(final.finishedAt as string).getTime() - new Date(final.createdAt as string).getTime();
    const windows = Math.floor(lifetime / 250) + 2;
    expect(events.length).toBeGreaterThan(60); // the stream of this run: ~93 events
    expect(updates.length).toBeLessThanOrEqual(windows);
    expect(updates.length).toBeLessThan(events.length / 4);
    // Progress while running: the usage so far grows before the end.
    const running = updates.filter((update) => update.run.status === 'RUNNING');
    if (running.length > 1) expect(running.at(-1)!.run.usage.totalTokens).toBeGreaterThanOrEqual(running[0]!.run.usage.totalTokens);
    expect(final.usage.totalTokens).toBeGreaterThan(0);
    feed.stop();
  });

  it('should tell the live list when the sweep settles a run whose process died', async () => {
    // A run RUNNING with a fresh heartbeat: no sweep touches it until the feed has its snapshot.
    const id = randomUUID();
    await t.app.services.db
      .insertInto('runs')
      .values({ id, configuration_id: decodeGlobalID(quick).id, user_id: null, status: 'RUNNING', prompt: null, privacy_level: 'METADATA', heartbeat_at: new Date() })
      .execute();
    const feed = watch<Update>(client(t.adminToken), textOf(RUN_UPDATES), { filter: { configurationId: quick, status: ['RUNNING', 'FAILED'] } });
    await feed.until((updates) => updates.some((update) => decodeGlobalID(update.run.id).id === id));
    // Then its process is gone: the heartbeat an hour old. The instance's own lease keeper sweeps
    // too and may settle it first (CI saw this call return 0): either sweep will do, the feed must
    // tell it once.
    await t.app.services.db.updateTable('runs').set({ heartbeat_at: new Date(Date.now() - 3_600_000) }).where('id', '=', id).execute();
    await t.app.services.runHost.settleStale();
    const seen = await feed.until((updates) => updates.some((update) => decodeGlobalID(update.run.id).id === id && update.run.status === 'FAILED'));
    expect(seen.filter((update) => decodeGlobalID(update.run.id).id === id).map((update) => [update.snapshot, update.run.status])).toEqual([
      [true, 'RUNNING'],
      [false, 'FAILED'],
    ]);
    feed.stop();
  });

  it('should give a client that reconnects a fresh snapshot', async () => {
    const run = await start(alice.token, quick);
    await run.done;
    const first = watch<Update>(client(alice.token), textOf(RUN_UPDATES), { filter: { configurationId: quick } });
    await first.until((updates) => updates.some((update) => update.run.id === run.id));
    first.stop();
    const again = await start(alice.token, quick);
    await again.done;
    const second = watch<Update>(client(alice.token), textOf(RUN_UPDATES), { filter: { configurationId: quick } });
    // Newest first: the snapshot's two rows are two frames, which may arrive in two reads.
    const seen = await second.until((updates) => updates.filter((update) => update.snapshot).length >= 2);
    const snapshot = seen.filter((update) => update.snapshot);
    expect(snapshot.map((update) => update.run.id)).toEqual(expect.arrayContaining([run.id, again.id]));
    expect(snapshot.find((update) => update.run.id === again.id)!.run.status).toBe('COMPLETED');
    second.stop();
  });

  it('should stream the same feed over server-sent events', async () => {
    const run = await start(t.adminToken, quick);
    await run.done;
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ query: textOf(RUN_UPDATES), variables: { filter: { configurationId: quick } } }),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    while (sseEvents(text, 'runUpdates').length === 0) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const updates = sseEvents(text, 'runUpdates') as Update[];
    expect(updates[0]!.snapshot).toBe(true);
    // Alice's feed over SSE: never the admin's run.
    expect(updates.every((update) => update.run.user?.name === 'feed-alice')).toBe(true);
  });

  it('should drop live events not newer than the snapshot, so nothing is shown twice or goes back in time', async () => {
    const done = await start(alice.token, quick);
    await done.done;
    const [settled] = await findRunsByIds(t.app.services.db, [decodeGlobalID(done.id).id]);
    expect(settled).toMatchObject({ status: 'COMPLETED', state_version: 1 });
    // A bus of our own, so the test decides what was published between subscribing and reading the snapshot.
    const bus = createRunEventBus<RunRow>();
    const feed = await runUpdates({ ...t.app.services, bus }, { ...NO_RUN_FILTER, configurationId: settled!.configuration_id, createdFrom: settled!.created_at });
    const snapshot = await feed.next();
    expect(snapshot.value).toMatchObject({ snapshot: true, run: { id: settled!.id, status: 'COMPLETED' } });
    // Stale: the settled run's own history, published before the snapshot was read.
    const running = { ...settled!, status: 'RUNNING' as const, state_version: 0, finished_at: null, termination_reason: null };
    bus.publish({ type: 'started', runId: settled!.id, run: running });
    bus.publish({ type: 'step', runId: settled!.id, sequence: 1, stateVersion: 0, progress: { iterations: 1, usage: { promptTokens: 1, completionTokens: 1, cost: 0 } }, full: {} as never, filtered: {} as never });
    bus.publish({ type: 'finished', runId: settled!.id, finalContent: null, run: settled! });
    // New: another run, created after the snapshot.
    const fresh = { ...running, id: randomUUID(), created_at: new Date() };
    bus.publish({ type: 'started', runId: fresh.id, run: fresh });
    bus.publish({ type: 'finished', runId: fresh.id, finalContent: null, run: { ...fresh, status: 'COMPLETED', state_version: 1, finished_at: new Date() } });
    const live = [(await feed.next()).value, (await feed.next()).value];
    expect(live.map((update) => [update.run.id, update.run.status, update.snapshot])).toEqual([
      [fresh.id, 'RUNNING', false],
      [fresh.id, 'COMPLETED', false],
    ]);
    await feed.return(undefined);
    expect(bus.subscriberCount()).toBe(0);
  });

  it("should show a run's end that its process stored but never published, once the sweep finds it settled past the grace", async () => {
    const bus = createRunEventBus<RunRow>();
    const db = t.app.services.db;
    const run = await leasedRun(db);
    const feed = await runUpdates({ ...t.app.services, bus }, { ...NO_RUN_FILTER, createdFrom: run.created_at }, { windowMs: 0 });
    const shown: RunUpdate[] = [];
    while (!shown.some((update) => update.run.id === run.id)) shown.push((await feed.next()).value as RunUpdate);
    expect(shown.at(-1)).toMatchObject({ snapshot: true, run: { status: 'RUNNING' } });
    // Its process stores the end, then dies before publishing it.
    await db.updateTable('runs').set({ status: 'COMPLETED', finished_at: new Date(), state_version: run.state_version + 1 }).where('id', '=', run.id).execute();
    expect(await deliverLostEnds({ db, bus }, 60_000)).toBe(0);
    expect(await deliverLostEnds({ db, bus }, -1)).toBe(1);
    expect((await feed.next()).value).toMatchObject({ snapshot: false, run: { id: run.id, status: 'COMPLETED' } });
    // Shown: the list no longer holds the run, and the next sweep finds nothing.
    expect(await deliverLostEnds({ db, bus }, -1)).toBe(0);
    await feed.return(undefined);
  });

  it('should hand every feed the same update objects for the same run state, so one GraphQL execution serves them all', async () => {
    const bus = createRunEventBus<RunRow>();
    const [template] = await findRunsByIds(t.app.services.db, [decodeGlobalID((await start(alice.token, quick)).id).id]);
    const filter = { ...NO_RUN_FILTER, createdFrom: new Date(Date.now() + 60_000) };
    const feeds = await Promise.all([1, 2, 3].map(() => runUpdates({ ...t.app.services, bus }, filter, { windowMs: 0 })));
    const running = { ...template!, id: randomUUID(), status: 'RUNNING' as const, state_version: 0, finished_at: null, termination_reason: null, created_at: new Date(Date.now() + 120_000) };
    const received: RunUpdate[][] = feeds.map(() => []);
    // One event at a time, each read by every feed before the next (else the outbox would fold them).
    for (const event of [
      { type: 'started', runId: running.id, run: running },
      { type: 'step', runId: running.id, sequence: 1, stateVersion: 0, progress: { iterations: 1, usage: { promptTokens: 5, completionTokens: 2, cost: 0 } }, full: {} as never, filtered: {} as never },
      { type: 'finished', runId: running.id, finalContent: null, run: { ...running, status: 'COMPLETED', state_version: 1, finished_at: new Date() } },
    ] satisfies RunBusEventDraft<RunRow>[]) {
      bus.publish(event);
      for (const [index, feed] of feeds.entries()) received[index]!.push((await feed.next()).value as RunUpdate);
    }
    expect(received[0]!.map((update) => [update.run.status, update.run.iterations, update.run.prompt_tokens, update.snapshot])).toEqual([
      ['RUNNING', running.iterations, running.prompt_tokens, false],
      ['RUNNING', 1, 5, false],
      ['COMPLETED', running.iterations, running.prompt_tokens, false],
    ]);
    for (const other of received.slice(1)) other.forEach((update, index) => expect(update).toBe(received[0]![index]));
    await Promise.all(feeds.map((feed) => feed.return(undefined)));
  });

  it('should cut off a reader that stops reading, with an error saying to subscribe again', async () => {
    const feed = await runUpdates(t.app.services, { ...NO_RUN_FILTER, configurationId: decodeGlobalID(busy).id }, { maxPendingRuns: 2, snapshotSize: 0 });
    const first = feed.next();
    const runs = [await start(t.adminToken, busy)];
    await first; // now the reader stops reading while more runs make progress
    runs.push(...(await Promise.all([start(t.adminToken, busy), start(t.adminToken, busy), start(t.adminToken, busy)])));
    await Promise.all(runs.map((run) => run.done));
    const failure = await (async () => {
      for (;;) await feed.next();
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SubscriberOverflowError);
    expect((failure as Error).message).toMatch(/subscribe again for a fresh snapshot/);
    await feed.return(undefined);
  });

  it('should show the approvals queue to the owner and to admins, never to another user, with waiting, decided and cancelled', async () => {
    const waitingBefore = await start(alice.token, editor);
    await waitingBefore.done; // runAgent ends when the run parks
    const aliceQueue = watch<ApprovalEvent>(client(alice.token), textOf(APPROVAL_REQUESTS));
    const adminQueue = watch<ApprovalEvent>(client(t.adminToken), textOf(APPROVAL_REQUESTS));
    const bobQueue = watch<ApprovalEvent>(client(bob.token), textOf(APPROVAL_REQUESTS));
    const snapshot = await aliceQueue.until((events) => events.some((event) => event.run.id === waitingBefore.id));
    expect(snapshot[0]).toMatchObject({ kind: 'WAITING', snapshot: true, run: { status: 'WAITING_FOR_APPROVAL' } });
    expect(snapshot[0]!.pendingCalls![0]).toMatchObject({ name: 'update_record' });
    expect(snapshot[0]!.pendingCalls![0]!.preview).toContain('Renamed');

    const waitingLive = await start(alice.token, editor);
    await waitingLive.done;
    const live = await aliceQueue.until((events) => events.some((event) => event.run.id === waitingLive.id));
    const waitingEvent = live.find((event) => event.run.id === waitingLive.id)!;
    expect(waitingEvent).toMatchObject({ kind: 'WAITING', snapshot: false });

    const approved = await t.gql(APPROVE, { id: waitingBefore.id, digest: snapshot[0]!.turnDigest!, approved: true });
    expect(approved.data?.approveRun.__typename).toBe('Run');
    const cancelled = await t.gql(CANCEL, { id: waitingLive.id }, alice.token);
    expect(cancelled.data?.cancelRun).toMatchObject({ status: 'CANCELLED' });

    const done = (events: ApprovalEvent[]) =>
      events.some((event) => event.kind === 'DECIDED' && event.run.id === waitingBefore.id) && events.some((event) => event.kind === 'CANCELLED' && event.run.id === waitingLive.id);
    for (const queue of [aliceQueue, adminQueue]) {
      const events = await queue.until(done);
      expect(events.find((event) => event.kind === 'DECIDED')).toMatchObject({ approved: true, decidedBy: { name: 'admin' }, run: { id: waitingBefore.id } });
      expect(events.filter((event) => event.run.id === waitingLive.id).map((event) => event.kind)).toEqual(['WAITING', 'CANCELLED']);
    }
    // Bob's first event is his own run: none of Alice's came before it.
    const bobs = await start(bob.token, editor);
    await bobs.done;
    const bobEvents = await bobQueue.until((events) => events.length > 0);
    expect(bobEvents.every((event) => event.run.user?.name === 'feed-bob')).toBe(true);
    aliceQueue.stop();
    adminQueue.stop();
    bobQueue.stop();
  });
});

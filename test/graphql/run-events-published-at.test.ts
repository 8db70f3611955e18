import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRow } from '../../src/db/database.ts';
import { insertRun } from '../../src/db/repositories/runs.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { StoredStep } from '../../src/runtime/stored-step.ts';
import { runUpdates } from '../../src/services/run-feeds.ts';
import { NO_RUN_FILTER } from '../../src/services/run-filter.ts';
import { graphql } from '../gql/gql.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { follow } from '../helpers/instances.ts';
import { scriptedConfiguration, wsClient } from '../helpers/runs.ts';

/**
 * Live events carry the time their instance published them on the bus (issue 30: clients measure
 * their lag from it); what is read from storage carries null.
 */
const TIMED_EVENT = graphql(`
  fragment TimedRunEvent on RunEvent {
    __typename
    ... on RunStartedEvent { publishedAt }
    ... on RunStepEvent { publishedAt step { sequence } }
    ... on RunSuspendedEvent { publishedAt }
    ... on RunResumedEvent { publishedAt }
    ... on RunFinishedEvent { publishedAt }
  }
`);
const TIMED_RUN_AGENT = graphql(`
  subscription TimedRunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...TimedRunEvent } }
`);
const TIMED_RUN_EVENTS = graphql(`
  subscription TimedRunEvents($runId: ID!) { runEvents(runId: $runId) { ...TimedRunEvent } }
`);
const TIMED_RUN_UPDATES = graphql(`
  subscription TimedRunUpdates($filter: RunFilter) { runUpdates(filter: $filter) { snapshot publishedAt run { id status } } }
`);

interface TimedEvent {
  readonly __typename: string;
  readonly publishedAt: string | null;
  readonly step?: { readonly sequence: number };
}
interface TimedUpdate {
  readonly snapshot: boolean;
  readonly publishedAt: string | null;
  readonly run: { readonly id: string; readonly status: string };
}

const stepAt = (sequence: number): StoredStep => ({
  kind: 'LLM',
  round: sequence,
  durationMs: 1,
  content: `step ${sequence}`,
  contentRedacted: false,
  contentLength: `step ${sequence}`.length,
  usage: { promptTokens: 1, completionTokens: 1, cost: 0 },
});

/** A time the server sent is within [from, to] (the test's own clock readings, same machine). */
const expectBetween = (publishedAt: string | null, from: number, to: number) => {
  expect(publishedAt).not.toBeNull();
  const at = Date.parse(publishedAt!);
  expect(at).toBeGreaterThanOrEqual(from);
  expect(at).toBeLessThanOrEqual(to);
};

describe.each(TEST_DATABASES)('publishedAt of live run events and runs-list updates on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let quick: string;
  const clients: Client[] = [];
  const client = () => {
    const created = wsClient(url, t.adminToken);
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    quick = await scriptedConfiguration(t, 'published-at-quick', { replies: [{ content: 'done' }] });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t.stop();
  });

  it('should stamp every event of runAgent with the time it was published, between subscribing and receiving it', async () => {
    const before = Date.now();
    const watching = follow(client(), TIMED_RUN_AGENT, { input: { configurationId: quick, prompt: 'go' } }, (data) => data.runAgent as TimedEvent);
    expect(await watching.ended).toBeNull();
    const after = Date.now();
    expect(watching.events.map((event) => event.__typename)).toEqual(expect.arrayContaining(['RunStartedEvent', 'RunStepEvent', 'RunFinishedEvent']));
    for (const event of watching.events) expectBetween(event.publishedAt, before, after);
  });

  it('should give replayed and gap-filled steps null and a live step its publication time (runEvents)', async () => {
    const run = await insertRun(t.app.services.db, { id: randomUUID(), configuration_id: null, user_id: null, status: 'RUNNING', prompt: 'timed', privacy_level: 'FULL', tool_selection: null });
    const { writer, bus } = t.app.services;
    const store = async (sequence: number) => {
      const written = writer.insertStep({ runId: run.id, sequence, kind: 'LLM', round: sequence, durationMs: 1, payload: stepAt(sequence) });
      writer.expedite();
      await written;
    };
    await store(1);
    const before = Date.now();
    const watching = follow(client(), TIMED_RUN_EVENTS, { runId: run.id }, (data) => data.runEvents as TimedEvent);
    await watching.until((events) => events.some((event) => event.step?.sequence === 1), 'the replay of step 1');
    await store(2); // stored, never published: filled from storage before step 3
    await store(3);
    bus.publish({ type: 'step', runId: run.id, sequence: 3, stateVersion: run.state_version, progress: { iterations: 3, usage: { promptTokens: 3, completionTokens: 3, cost: 0 } }, full: stepAt(3), filtered: stepAt(3) });
    await watching.until((events) => events.some((event) => event.step?.sequence === 3), 'live step 3');
    const after = Date.now();
    watching.stop();
    const [started, ...steps] = watching.events;
    expect(started).toMatchObject({ __typename: 'RunStartedEvent', publishedAt: null });
    expect(steps.map((event) => [event.step?.sequence, event.publishedAt === null])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    expectBetween(steps[2]!.publishedAt, before, after);
  });

  it('should give runUpdates snapshot rows null and live updates their publication time', async () => {
    const settled = follow(client(), TIMED_RUN_AGENT, { input: { configurationId: quick, prompt: 'go' } }, () => null);
    expect(await settled.ended).toBeNull();
    const before = Date.now();
    const feed = follow(client(), TIMED_RUN_UPDATES, { filter: { configurationId: quick } }, (data) => data.runUpdates as TimedUpdate);
    await feed.until((updates) => updates.some((update) => update.snapshot), 'the snapshot');
    const live = follow(client(), TIMED_RUN_AGENT, { input: { configurationId: quick, prompt: 'go' } }, (data) => data.runAgent as TimedEvent);
    expect(await live.ended).toBeNull();
    await feed.until((updates) => updates.some((update) => !update.snapshot && update.run.status === 'COMPLETED'), 'the live run completed');
    const after = Date.now();
    feed.stop();
    const snapshot = feed.events.filter((update) => update.snapshot);
    const changes = feed.events.filter((update) => !update.snapshot);
    expect(snapshot.length).toBeGreaterThan(0);
    for (const update of snapshot) expect(update.publishedAt).toBeNull();
    expect(changes.length).toBeGreaterThan(0);
    for (const update of changes) expectBetween(update.publishedAt, before, after);
  });

  it('should give a coalesced update the publication time of the newest event folded into it', async () => {
    // A bus of our own, so the test sets each event's time (deliver keeps it, as for another instance's events).
    const bus = createRunEventBus<RunRow>();
    const template = await insertRun(t.app.services.db, { id: randomUUID(), configuration_id: null, user_id: null, status: 'COMPLETED', prompt: 'template', privacy_level: 'FULL', tool_selection: null });
    const feed = await runUpdates({ ...t.app.services, bus }, { ...NO_RUN_FILTER, createdFrom: new Date(Date.now() + 60_000) }, { windowMs: 5 });
    const running: RunRow = { ...template, id: randomUUID(), status: 'RUNNING', state_version: 0, iterations: 0, prompt_tokens: 0, completion_tokens: 0, finished_at: null, termination_reason: null, created_at: new Date(Date.now() + 120_000) };
    const progress = (sequence: number, publishedAt: number) =>
      bus.deliver({ type: 'step', runId: running.id, sequence, stateVersion: 0, progress: { iterations: sequence, usage: { promptTokens: sequence, completionTokens: sequence, cost: 0 } }, full: {} as never, filtered: {} as never, publishedAt });
    const first = feed.next();
    bus.deliver({ type: 'started', runId: running.id, run: running, publishedAt: 1_000 });
    expect((await first).value).toMatchObject({ snapshot: false, publishedAt: 1_000, run: { status: 'RUNNING' } });
    // Both steps fold into one update while nobody reads (the feed's reading of the bus is microtasks).
    progress(1, 2_000);
    progress(2, 3_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await feed.next()).value).toMatchObject({ publishedAt: 3_000, run: { iterations: 2 } });
    await feed.return(undefined);
  });
});

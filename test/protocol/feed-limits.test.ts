import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { insertRun } from '../../src/db/repositories/runs.ts';
import { QUERY_COST, queryCostOf } from '../../src/graphql/plugins/query-cost.ts';
import { buildSchema } from '../../src/graphql/schema.ts';
import { MAX_PENDING_APPROVALS } from '../../src/services/approvals.ts';
import { FEED_SNAPSHOT_SIZE } from '../../src/services/run-feeds.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { eventually, RawSocket, type WireMessage } from './raw-socket.ts';

/**
 * The list feeds (runUpdates, approvalRequests) send a snapshot of up to 100 rows, each running the
 * whole selection: they are costed for all of it, as the equivalent `runs(first: 100)` query, and
 * their snapshot is bounded by AIRLOCK_MAX_RESPONSE_BYTES as one response (issue 26, hole 3: a
 * 150-byte runUpdates request answered 19.9 MB over 15 runs).
 */

const MAX_RESPONSE_BYTES = 48 * 1024;
const TOO_LARGE = { message: `The response exceeds ${MAX_RESPONSE_BYTES} bytes: ask for fewer items (first/last) or fewer fields.`, extensions: { code: 'RESPONSE_TOO_LARGE' } };
/** A FULL-privacy prompt of 20 000 characters: two fit in the limit, three do not. */
const PROMPT = 'p'.repeat(20_000);
const STEP_FIELDS = 'steps(first: 100) { edges { node { content toolResult messagesSent } } }';

/** One operation on a raw socket: every message of it up to its `complete` or `error`. */
async function operation(socket: RawSocket, id: string, query: string, variables?: Record<string, unknown>): Promise<WireMessage[]> {
  socket.subscribe(id, query, variables);
  return socket.operation(id);
}

/** The `next` payloads of an operation's messages; an `error` frame's errors as one payload. */
const payloadsOf = (messages: readonly WireMessage[]): any[] =>
  messages.flatMap((message) => (message.type === 'next' ? [message.payload] : message.type === 'error' ? [{ errors: message.payload }] : []));

/** A cost refusal's message without the cost found, which differs from one document to another. */
const withoutFound = (message: string) => message.replace(/found \d+/, 'found N');

describe('the cost of a list feed', () => {
  const schema = buildSchema();
  const cost = (source: string, variables?: Record<string, unknown>) => queryCostOf(schema, parse(source), null, variables ?? {});

  it('should cost runUpdates and approvalRequests for a whole snapshot, as runs(first: 100) with the same selection', () => {
    for (const selection of ['id status', `id ${STEP_FIELDS}`]) {
      const feed = cost(`subscription { runUpdates { run { ${selection} } } }`);
      const query = cost(`query { runs(first: ${FEED_SNAPSHOT_SIZE}) { edges { node { ${selection} } } } }`);
      // The same rows and fields (`run` is the connection's `node`); its `edges` wrapper adds one per row.
      expect(feed).toBe(query - FEED_SNAPSHOT_SIZE);
    }
    expect(cost('subscription { approvalRequests { kind run { id } } }')).toBe(1 + FEED_SNAPSHOT_SIZE * (QUERY_COST.rowCost + 1 + (1 + 1)));
  });

  it('should cost the pendingApprovals query as the list of waiting runs it can return, not as a list of 10', () => {
    // The same rows as the approvalRequests snapshot, with the same selection under `run`.
    expect(MAX_PENDING_APPROVALS).toBe(FEED_SNAPSHOT_SIZE);
    // (the feed also charges each snapshot row's read, QUERY_COST.rowCost)
    const feed = cost(`subscription { approvalRequests { run { id ${STEP_FIELDS} } } }`);
    expect(cost(`query { pendingApprovals { run { id ${STEP_FIELDS} } } }`)).toBe(feed - FEED_SNAPSHOT_SIZE * QUERY_COST.rowCost);
    expect(cost(`query { pendingApprovals { run { id ${STEP_FIELDS} } } }`)).toBeGreaterThan(QUERY_COST.maxCost);
  });

  it("should accept the console's feed documents", () => {
    const source = readFileSync(path.resolve(import.meta.dirname, '../../src/dashboard/app/documents.ts'), 'utf8');
    const subscriptions = [...source.matchAll(/graphql\(`\s*(subscription [\s\S]*?)`\)/g)].map((match) => match[1]!);
    const variables: Record<string, Record<string, unknown>> = { ConsoleRunUpdates: { filter: null }, ConsoleApprovalRequests: {}, ConsoleRunEvents: { runId: 'x' } };
    expect(subscriptions.map((document) => /^subscription (\w+)/.exec(document)![1]).sort()).toEqual(Object.keys(variables).sort());
    for (const document of subscriptions) {
      expect(cost(document, variables[/^subscription (\w+)/.exec(document)![1]!])).toBeLessThanOrEqual(QUERY_COST.maxCost);
    }
  });
});

describe.each(TEST_DATABASES)('list feeds within the query limits on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let owner: { id: string; token: string };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES) } });
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    await t.gql(`mutation { setToolEnabled(name: "update_record", enabled: true) { enabled } }`);
    const created = (await t.gql(`mutation { createUser(input: { name: "feed-owner" }) { ... on CreateUserPayload { token user { id } } } }`)).data.createUser;
    owner = { id: decodeGlobalID(created.user.id).id, token: created.token };
    await t.gql(`mutation($id: ID!) { grantTable(userId: $id, table: "customers", mode: WRITE) { __typename } }`, { id: created.user.id });
    // Fifteen settled runs of the owner, each with a 20 000-character prompt.
    for (let index = 0; index < 15; index++) {
      await insertRun(t.app.services.db, { id: randomUUID(), configuration_id: null, user_id: owner.id, status: 'COMPLETED', prompt: PROMPT, privacy_level: 'FULL', tool_selection: null });
    }
  });
  afterAll(async () => {
    await t.stop();
  });

  it("should refuse a non-admin's runUpdates selection that costs more than the limit, with the error of the equivalent runs(first: 100) query", async () => {
    const socket = await RawSocket.open(url, owner.token);
    try {
      const feed = payloadsOf(await operation(socket, 'feed', `subscription { runUpdates { run { ${STEP_FIELDS} } } }`));
      const query = await t.gql(`query { runs(first: ${FEED_SNAPSHOT_SIZE}) { edges { node { ${STEP_FIELDS} } } } }`, undefined, owner.token);
      expect(feed).toHaveLength(1);
      for (const result of [feed[0], query]) {
        expect(result.data ?? null).toBeNull();
        expect(result.errors).toHaveLength(1);
        expect(result.errors[0].extensions).toEqual({ code: 'QUERY_TOO_COSTLY' });
      }
      expect(withoutFound(feed[0].errors[0].message)).toBe(withoutFound(query.errors![0].message));
      // The same socket still streams a feed with a small selection: the snapshot, whole.
      socket.subscribe('small', 'subscription { runUpdates { snapshot run { id status } } }');
      const small = await Promise.all(Array.from({ length: 15 }, () => socket.next((message) => message.id === 'small')));
      expect(small.map((message) => [message.type, message.payload.data?.runUpdates.snapshot])).toEqual(Array.from({ length: 15 }, () => ['next', true]));
      socket.send({ id: 'small', type: 'complete' });
    } finally {
      await socket.close();
    }
  });

  it('should send no more of a runUpdates snapshot than AIRLOCK_MAX_RESPONSE_BYTES, then the error, and end the subscription', async () => {
    const socket = await RawSocket.open(url, owner.token);
    let messages: WireMessage[];
    try {
      messages = await operation(socket, 'prompts', 'subscription { runUpdates { snapshot run { id prompt } } }');
    } finally {
      await socket.close();
    }
    const payloads = payloadsOf(messages);
    const delivered = payloads.filter((payload) => payload.data);
    expect(delivered.every((payload) => payload.data.runUpdates.snapshot && payload.data.runUpdates.run.prompt === PROMPT)).toBe(true);
    expect(delivered.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(delivered))).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    expect(payloads.at(-1)).toEqual({ errors: [TOO_LARGE] });
    expect(messages.at(-1)!.type).toBe('complete');
  });

  it('should send no more of an approvalRequests snapshot than AIRLOCK_MAX_RESPONSE_BYTES, then the error, and end the subscription', async () => {
    const rename = { content: 'renaming', toolCalls: [{ name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: '3' }, changes: { name: 'Renamed' } } }] };
    const editor = await scriptedConfiguration(t, 'feed-limits-editor', { replies: [rename, { content: 'renamed' }], privacyLevel: 'FULL', allowedToolGroups: ['editing'] });
    const ids: string[] = [];
    for (let index = 0; index < 4; index++) {
      const started = await t.gql(`mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } } }`, { input: { configurationId: editor, prompt: PROMPT } }, owner.token);
      ids.push(decodeGlobalID(started.data.startRun.id).id);
    }
    await eventually(
      () => t.app.services.db.selectFrom('runs').select('status').where('id', 'in', ids).execute(),
      (rows) => rows.length === ids.length && rows.every((row) => row.status === 'WAITING_FOR_APPROVAL'),
      30_000,
    );

    const socket = await RawSocket.open(url, owner.token);
    let messages: WireMessage[];
    try {
      messages = await operation(socket, 'queue', 'subscription { approvalRequests { kind snapshot run { id prompt } pendingCalls { name preview } } }');
    } finally {
      await socket.close();
    }
    const payloads = payloadsOf(messages);
    const delivered = payloads.filter((payload) => payload.data);
    expect(delivered.every((payload) => payload.data.approvalRequests.kind === 'WAITING' && payload.data.approvalRequests.run.prompt === PROMPT)).toBe(true);
    expect(delivered.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(delivered))).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    expect(payloads.at(-1)).toEqual({ errors: [TOO_LARGE] });
    expect(messages.at(-1)!.type).toBe('complete');
  });

  it('should replace a live runUpdates event over the limit with the error and go on streaming', async () => {
    const quick = await scriptedConfiguration(t, 'feed-limits-quick', { replies: [{ content: 'done' }], privacyLevel: 'FULL' });
    const start = async (prompt: string): Promise<string> =>
      (await t.gql(`mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } } }`, { input: { configurationId: quick, prompt } }, owner.token)).data.startRun.id;
    const completed = (id: string) => (message: WireMessage) => message.id === 'live' && message.payload.data?.runUpdates.run.id === id && message.payload.data.runUpdates.run.status === 'COMPLETED';
    const socket = await RawSocket.open(url, owner.token);
    try {
      socket.subscribe('live', 'subscription($filter: RunFilter) { runUpdates(filter: $filter) { run { id status prompt } } }', { filter: { configurationId: quick } });
      // A small run shows the feed is live (in its snapshot or live); then a run whose updates
      // each carry 60 000 characters, then another small one.
      await socket.next(completed(await start('small')), 20_000);
      await start('q'.repeat(60_000));
      const refused = await socket.next((message) => message.id === 'live' && message.payload.errors !== undefined, 20_000);
      expect(refused.payload).toEqual({ errors: [TOO_LARGE] });
      await socket.next(completed(await start('small')), 20_000);
      expect(socket.frames.every((frame) => frame.length < MAX_RESPONSE_BYTES)).toBe(true);
      socket.send({ id: 'live', type: 'complete' });
    } finally {
      await socket.close();
    }
  });
});

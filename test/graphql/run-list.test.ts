import { encodeGlobalID } from '@pothos/plugin-relay';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, type DocumentType } from '../gql/gql.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { member, textOf } from '../helpers/documents.ts';
import { RUN_AGENT, scriptedConfiguration, sseEvents } from '../helpers/runs.ts';

const RUN_LIST = graphql(`
  query RunList($filter: RunFilter, $first: Int, $after: String, $last: Int, $before: String) {
    runs(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { id status terminationReason user { name } configuration { name } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);
type RunPage = DocumentType<typeof RUN_LIST>['runs'];
const CREATE_USER = graphql(`
  mutation RunListCreateUser { createUser(input: { name: "lister" }) { __typename ... on CreateUserPayload { token user { id } } } }
`);

describe.each(TEST_DATABASES)('the runs list, filtered and counted, on %s', (kind) => {
  let t: TestApp;
  let alice: { id: string; token: string };
  let plain: string;
  let capped: string;
  /** Run ids, oldest first. */
  const started: string[] = [];

  const run = async (configurationId: string, token: string) => {
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt: 'go' } } }),
    });
    const finished = sseEvents(await response.text(), 'runAgent').at(-1);
    started.push(finished.run.id);
    return finished.run.id as string;
  };
  const list = (variables: Record<string, unknown>, token?: string) => t.gql(RUN_LIST, variables as never, token);

  beforeAll(async () => {
    t = await startTestApp(kind);
    const created = member((await t.gql(CREATE_USER)).data?.createUser, 'CreateUserPayload');
    alice = { id: created.user.id, token: created.token };
    plain = await scriptedConfiguration(t, 'plain', { replies: [{ content: 'done' }] });
    // Always calls a tool: with one iteration the run ends MAX_ITERATIONS.
    capped = await scriptedConfiguration(t, 'capped', {
      replies: [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }],
      finalReply: { content: 'summed up' },
      maxIterations: 1,
      allowedToolGroups: ['structure'],
    });
    await run(plain, alice.token);
    await run(capped, alice.token);
    await run(plain, t.adminToken);
    await run(capped, t.adminToken);
    await run(plain, alice.token);
  });
  afterAll(() => t.stop());

  it('should filter by configuration, user, status and reason, and count what matches', async () => {
    const count = async (filter: object, token?: string) => (await list({ filter }, token)).data!.runs.totalCount;
    expect(await count({})).toBe(5);
    expect(await count({ configurationId: plain })).toBe(3);
    expect(await count({ userId: alice.id })).toBe(3);
    expect(await count({ userId: alice.id, configurationId: capped })).toBe(1);
    expect(await count({ status: ['COMPLETED'] })).toBe(5);
    expect(await count({ status: ['RUNNING', 'FAILED'] })).toBe(0);
    expect(await count({ terminationReason: ['MAX_ITERATIONS'] })).toBe(2);
    const capList = (await list({ filter: { terminationReason: ['MAX_ITERATIONS'] } })).data!.runs.edges.map((edge) => edge.node);
    expect(capList.map((node) => node.configuration?.name)).toEqual(['capped', 'capped']);
  });

  it('should bound by creation time: from inclusive, to exclusive', async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await list({ filter: { createdFrom: future } })).data!.runs.totalCount).toBe(0);
    expect((await list({ filter: { createdFrom: past, createdTo: future } })).data!.runs.totalCount).toBe(5);
    expect((await list({ filter: { createdTo: past } })).data!.runs.totalCount).toBe(0);
    const reversed = await list({ filter: { createdFrom: future, createdTo: past } });
    expect(reversed.errors?.[0]).toMatchObject({ message: 'Invalid input: createdTo: must be after createdFrom', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('should keep a user to their own runs and refuse naming another user', async () => {
    const own = (await list({}, alice.token)).data!.runs;
    expect(own.totalCount).toBe(3);
    expect(new Set(own.edges.map((edge) => edge.node.user?.name))).toEqual(new Set(['lister']));
    const adminId: string = (await t.gql(`{ viewer { id } }`)).data.viewer.id;
    const refused = await list({ filter: { userId: adminId } }, alice.token);
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]).toMatchObject({ message: 'Only admins may list the runs of another user.', extensions: { code: 'FORBIDDEN' } });
  });

  it('should page through runs created within one millisecond, each exactly once, both ways', async () => {
    const ids = [1, 2, 3, 4].map(() => crypto.randomUUID());
    for (const [index, id] of ids.entries()) {
      await sql`insert into runs (id, status, termination_reason, privacy_level, created_at)
        values (${id}, 'CANCELLED', 'CANCELLED', 'METADATA', ${`2020-01-01T00:00:00.12300${index}Z`}::timestamptz)`.execute(t.app.services.db);
    }
    const filter = { status: ['CANCELLED'] };
    const forward: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 6; page++) {
      const runs: RunPage = (await list({ filter, first: 1, after })).data!.runs;
      forward.push(...runs.edges.map((edge) => edge.node.id));
      if (!runs.pageInfo.hasNextPage) break;
      after = runs.pageInfo.endCursor!;
    }
    const backward: string[] = [];
    let before: string | null = null;
    for (let page = 0; page < 6; page++) {
      const runs: RunPage = (await list({ filter, last: 1, before })).data!.runs;
      backward.unshift(...runs.edges.map((edge) => edge.node.id));
      if (!runs.pageInfo.hasPreviousPage) break;
      before = runs.pageInfo.startCursor!;
    }
    const expected = [...ids].reverse().map((id) => encodeGlobalID('Run', id));
    expect(forward).toEqual(expected);
    expect(backward).toEqual(expected);
    await sql`delete from runs where id in (${sql.join(ids)})`.execute(t.app.services.db);
  });

  it('should page backwards with last and before, newest first within a page', async () => {
    const newestFirst = [...started].reverse();
    const firstPage = (await list({ first: 2 })).data!.runs;
    expect(firstPage.edges.map((edge) => edge.node.id)).toEqual(newestFirst.slice(0, 2));
    expect(firstPage.pageInfo).toMatchObject({ hasNextPage: true });
    const oldest = (await list({ last: 2 })).data!.runs;
    expect(oldest.edges.map((edge) => edge.node.id)).toEqual(newestFirst.slice(3));
    expect(oldest.pageInfo).toMatchObject({ hasPreviousPage: true });
    const before = (await list({ last: 2, before: oldest.pageInfo.startCursor })).data!.runs;
    expect(before.edges.map((edge) => edge.node.id)).toEqual(newestFirst.slice(1, 3));
    expect(before.totalCount).toBe(5);
  });
});

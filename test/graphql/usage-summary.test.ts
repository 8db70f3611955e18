import { decodeGlobalID } from '@pothos/plugin-relay';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarizeUsage } from '../../src/db/repositories/usage.ts';
import { graphql } from '../gql/gql.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';

/**
 * usageSummary (issue 14): provider calls, tokens and cost from the usage records, per group, over
 * [from, to); a user sees their own usage, an admin everyone's. The records are written directly,
 * at chosen instants, so that the bounds and the UTC days are exact.
 */

const USAGE_SUMMARY = graphql(`
  query UsageSummary($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) {
    usageSummary(from: $from, to: $to, groupBy: $groupBy) {
      user { id name }
      configuration { id name }
      model { id name }
      day
      requests
      promptTokens
      completionTokens
      cost
    }
  }
`);
const CREATE_USER = graphql(`
  mutation UsageCreateUser($name: String!) {
    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }
  }
`);
const DELETE_USER = graphql(`
  mutation UsageDeleteUser($userId: ID!) { deleteUser(userId: $userId) { __typename ... on Error { message } } }
`);
const DELETE_CONFIGURATION = graphql(`
  mutation UsageDeleteConfiguration($id: ID!) { deleteConfiguration(id: $id) { __typename ... on Error { message } } }
`);
const DELETE_MODEL = graphql(`
  mutation UsageDeleteModel($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }
`);
const MODEL_OF = graphql(`
  query UsageModelOf($id: ID!) { node(id: $id) { ... on Configuration { model { id } } } }
`);

interface Subject {
  readonly id: string;
  readonly raw: string;
}
const subject = (id: string): Subject => ({ id, raw: decodeGlobalID(id).id });

// The summary's range: [March 1, March 3) of 2026.
const FROM = '2026-03-01T00:00:00.000Z';
const TO = '2026-03-03T00:00:00.000Z';

describe.each(TEST_DATABASES)('usageSummary on %s', (kind) => {
  let t: TestApp;
  let alice: Subject & { token: string };
  let bob: Subject & { token: string };
  let configA: Subject;
  let configB: Subject;
  let modelA: Subject;
  let modelB: Subject;

  const createUser = async (name: string) => {
    const created = member((await t.gql(CREATE_USER, { name })).data?.createUser, 'CreateUserPayload');
    return { ...subject(created.user.id), token: created.token };
  };
  const configuration = async (name: string) => {
    const config = subject(await scriptedConfiguration(t, name, { replies: [] }));
    const model = (await t.gql(MODEL_OF, { id: config.id })).data?.node as { model: { id: string } };
    return { config, model: subject(model.model.id) };
  };
  const record = (at: string, who: { user: Subject | null; config: Subject; model: Subject }, promptTokens: number, completionTokens: number, cost: number) =>
    t.app.services.db
      .insertInto('usage_records')
      .values({
        id: crypto.randomUUID(),
        user_id: who.user?.raw ?? null,
        configuration_id: who.config.raw,
        model_id: who.model.raw,
        run_id: null,
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        cost,
        created_at: new Date(at),
      })
      .execute();
  const summary = (groupBy: ('USER' | 'CONFIGURATION' | 'MODEL' | 'DAY')[], token?: string, range: { from: string; to: string } = { from: FROM, to: TO }) =>
    t.gql(USAGE_SUMMARY, { ...range, groupBy }, token);
  const rows = async (groupBy: Parameters<typeof summary>[0], token?: string, range?: { from: string; to: string }) => {
    const response = await summary(groupBy, token, range);
    expect(response.errors).toBeUndefined();
    return response.data!.usageSummary;
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    alice = await createUser('alice');
    bob = await createUser('bob');
    ({ config: configA, model: modelA } = await configuration('usage-a'));
    ({ config: configB, model: modelB } = await configuration('usage-b'));
    const a = { config: configA, model: modelA };
    const b = { config: configB, model: modelB };
    await record('2026-03-01T00:00:00.000Z', { user: alice, ...a }, 10, 5, 1); // exactly at from: counted
    await record('2026-03-01T23:59:59.999Z', { user: alice, ...a }, 20, 10, 2);
    await record('2026-03-02T12:00:00.000Z', { user: alice, ...b }, 1, 1, 0.5);
    await record('2026-03-02T13:00:00.000Z', { user: bob, ...b }, 100, 50, 10);
    await record('2026-03-03T00:00:00.000Z', { user: bob, ...a }, 1000, 1000, 100); // exactly at to: not counted
    await record('2026-02-28T23:59:59.999Z', { user: bob, ...a }, 1000, 1000, 100); // before from: not counted
  });
  afterAll(() => t?.stop());

  it('should give one total row without groupBy, counting from inclusive and to exclusive', async () => {
    expect(await rows([])).toEqual([
      { user: null, configuration: null, model: null, day: null, requests: 4, promptTokens: 131, completionTokens: 66, cost: 13.5 },
    ]);
  });

  it('should give a total row of zeros for a range without records', async () => {
    expect(await rows([], undefined, { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' })).toEqual([
      { user: null, configuration: null, model: null, day: null, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 },
    ]);
  });

  it('should group by UTC day, in day order', async () => {
    expect(await rows(['DAY'])).toEqual([
      { user: null, configuration: null, model: null, day: '2026-03-01', requests: 2, promptTokens: 30, completionTokens: 15, cost: 3 },
      { user: null, configuration: null, model: null, day: '2026-03-02', requests: 2, promptTokens: 101, completionTokens: 51, cost: 10.5 },
    ]);
  });

  it("should cut days at UTC midnight whatever the session's time zone", async () => {
    const days = await t.app.services.db.transaction().execute(async (trx) => {
      await sql`set local timezone = 'America/New_York'`.execute(trx);
      return summarizeUsage(trx, { from: new Date(FROM), to: new Date(TO), groupBy: ['DAY'], userId: null, limit: 10 });
    });
    expect(days.map((group) => [group.day, group.requests])).toEqual([
      ['2026-03-01', 2],
      ['2026-03-02', 2],
    ]);
  });

  it('should group by user, highest cost first', async () => {
    expect(await rows(['USER'])).toEqual([
      { user: { id: bob.id, name: 'bob' }, configuration: null, model: null, day: null, requests: 1, promptTokens: 100, completionTokens: 50, cost: 10 },
      { user: { id: alice.id, name: 'alice' }, configuration: null, model: null, day: null, requests: 3, promptTokens: 31, completionTokens: 16, cost: 3.5 },
    ]);
  });

  it('should group by configuration and model together', async () => {
    const groups = await rows(['CONFIGURATION', 'MODEL']);
    expect(groups.map((group) => [group.configuration?.name, group.model?.id, group.requests, group.cost])).toEqual([
      ['usage-b', modelB.id, 2, 10.5],
      ['usage-a', modelA.id, 2, 3],
    ]);
    expect(groups.every((group) => group.user === null && group.day === null)).toBe(true);
  });

  it('should group by model alone', async () => {
    expect((await rows(['MODEL'])).map((group) => [group.model?.name, group.requests, group.promptTokens, group.completionTokens])).toEqual([
      ['m-usage-b', 2, 101, 51],
      ['m-usage-a', 2, 30, 15],
    ]);
  });

  it('should group by day and user, whatever the order of groupBy', async () => {
    const expected = [
      ['2026-03-01', 'alice', 2, 3],
      ['2026-03-02', 'bob', 1, 10],
      ['2026-03-02', 'alice', 1, 0.5],
    ];
    for (const groupBy of [['USER', 'DAY'], ['DAY', 'USER']] as const) {
      expect((await rows([...groupBy])).map((group) => [group.day, group.user?.name, group.requests, group.cost])).toEqual(expected);
    }
  });

  it('should group by every field at once', async () => {
    const groups = await rows(['USER', 'CONFIGURATION', 'MODEL', 'DAY']);
    expect(groups.map((group) => [group.day, group.user?.name, group.configuration?.name, group.model?.name, group.requests])).toEqual([
      ['2026-03-01', 'alice', 'usage-a', 'm-usage-a', 2],
      ['2026-03-02', 'bob', 'usage-b', 'm-usage-b', 1],
      ['2026-03-02', 'alice', 'usage-b', 'm-usage-b', 1],
    ]);
  });

  it("should show a user their own usage only, and an admin everyone's", async () => {
    expect(await rows([], alice.token)).toEqual([
      { user: null, configuration: null, model: null, day: null, requests: 3, promptTokens: 31, completionTokens: 16, cost: 3.5 },
    ]);
    expect((await rows(['USER'], alice.token)).map((group) => group.user?.id)).toEqual([alice.id]);
    expect((await rows(['CONFIGURATION'], bob.token)).map((group) => [group.configuration?.name, group.cost])).toEqual([['usage-b', 10]]);
    expect((await rows(['USER'])).map((group) => group.user?.id)).toEqual([bob.id, alice.id]);
  });

  it('should refuse an anonymous caller', async () => {
    const response = await summary([], '');
    expect(response.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('should refuse a range that ends before it starts, or is empty, naming `to`', async () => {
    for (const range of [{ from: TO, to: FROM }, { from: FROM, to: FROM }]) {
      const response = await summary([], undefined, range);
      expect(response.data).toBeNull();
      expect(response.errors?.[0]).toMatchObject({ message: 'Invalid input: to: must be after from', extensions: { code: 'BAD_USER_INPUT' } });
    }
  });

  it('should refuse a range of more than 366 days', async () => {
    expect((await summary([], undefined, { from: '2025-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' })).errors).toBeUndefined();
    const response = await summary([], undefined, { from: '2025-01-01T00:00:00Z', to: '2026-01-02T00:00:00.001Z' });
    expect(response.errors?.[0]).toMatchObject({
      message: 'Invalid input: to: must be at most 366 days after from: ask for a shorter range',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('should refuse a groupBy that names a field twice', async () => {
    const response = await summary(['DAY', 'USER', 'DAY']);
    expect(response.errors?.[0]).toMatchObject({ message: 'Invalid input: groupBy: must not name a field twice', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('should refuse a summary of more than 500 groups, and answer the same range grouped by fewer fields', async () => {
    // 3 users × 3 configurations × 56 days of 2025 = 504 groups by USER, CONFIGURATION and DAY.
    const { config: configC } = await configuration('usage-c');
    const users = [alice.raw, bob.raw, decodeGlobalID(await viewerId()).id];
    const configs = [configA.raw, configB.raw, configC.raw];
    await sql`
      insert into usage_records (id, user_id, configuration_id, model_id, prompt_tokens, completion_tokens, cost, created_at)
      select gen_random_uuid(), u::uuid, c::uuid, null, 1, 1, 0.01, timestamptz '2025-01-01 12:00:00+00' + make_interval(days => d)
      from unnest(${users}::text[]) u, unnest(${configs}::text[]) c, generate_series(0, 55) d`.execute(t.app.services.db);
    const range = { from: '2025-01-01T00:00:00Z', to: '2025-02-26T00:00:00Z' };
    const refused = await summary(['USER', 'CONFIGURATION', 'DAY'], undefined, range);
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]).toMatchObject({
      message: 'Invalid input: groupBy: the summary would hold more than 500 groups: ask for a shorter range (from/to) or group by fewer fields',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const groups = await rows(['USER', 'CONFIGURATION'], undefined, range);
    expect(groups).toHaveLength(9);
    expect(groups.every((group) => group.requests === 56)).toBe(true);
    expect((await rows(['DAY'], undefined, range)).map((group) => group.requests)).toEqual(Array.from({ length: 56 }, () => 9));
  });

  it('should show null for a user, configuration or model deleted since, as one group', async () => {
    const carol = await createUser('carol');
    const c = await configuration('usage-gone-c');
    const d = await configuration('usage-gone-d');
    const range = { from: '2024-06-01T00:00:00Z', to: '2024-06-02T00:00:00Z' };
    await record('2024-06-01T10:00:00Z', { user: carol, ...c }, 1, 2, 0.25);
    await record('2024-06-01T11:00:00Z', { user: carol, ...d }, 3, 4, 0.5);
    await record('2024-06-01T12:00:00Z', { user: bob, ...d }, 5, 6, 1);
    expect(await rows(['USER', 'CONFIGURATION', 'MODEL'], undefined, range)).toHaveLength(3);

    expect((await t.gql(DELETE_USER, { userId: carol.id })).data?.deleteUser.__typename).toBe('DeleteUserPayload');
    for (const gone of [c, d]) {
      expect((await t.gql(DELETE_CONFIGURATION, { id: gone.config.id })).data?.deleteConfiguration.__typename).toBe('Deleted');
      expect((await t.gql(DELETE_MODEL, { id: gone.model.id })).data?.deleteModel.__typename).toBe('Deleted');
    }
    expect(await rows(['USER', 'CONFIGURATION', 'MODEL'], undefined, range)).toEqual([
      { user: { id: bob.id, name: 'bob' }, configuration: null, model: null, day: null, requests: 1, promptTokens: 5, completionTokens: 6, cost: 1 },
      { user: null, configuration: null, model: null, day: null, requests: 2, promptTokens: 4, completionTokens: 6, cost: 0.75 },
    ]);
  });

  const VIEWER = graphql(`
    query UsageViewer { viewer { id } }
  `);
  async function viewerId(): Promise<string> {
    return (await t.gql(VIEWER)).data!.viewer!.id;
  }
});

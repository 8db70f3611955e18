import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { periodStart } from '../../src/runtime/budget.ts';
import { startFakeServer, type FakeServer } from '../fixtures/wires/fake-server.ts';
import { encodeOpenAi } from '../fixtures/wires/openai.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member, textOf } from '../helpers/documents.ts';
import { RUN_AGENT, sseEvents } from '../helpers/runs.ts';

/**
 * Budget.spent (issue 14): what a budget counts in its current period, next to its limits. Before
 * any call was checked against the budget this period it is the usage records of the period; once
 * it has a counter, the counter (which also keeps the request of a call that never answered).
 */

const BUDGETS = graphql(`
  query BudgetsSpent { budgets { scope subjectId period maxRequests spent { requests tokens cost } } }
`);
const SET_BUDGET = graphql(`
  mutation SpentSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Error { message } } }
`);
const CREATE_USER = graphql(`
  mutation SpentCreateUser($name: String!) {
    createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } }
  }
`);
const SETUP = graphql(`
  mutation SpentSetup($provider: CreateProviderInput!) { createProvider(input: $provider) { __typename ... on Provider { id } ... on Error { message } } }
`);
const MODEL = graphql(`
  mutation SpentModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }
`);
const CONFIGURATION = graphql(`
  mutation SpentConfiguration($input: CreateConfigurationInput!) {
    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }
  }
`);

describe.each(TEST_DATABASES)('Budget.spent on %s', (kind) => {
  let t: TestApp;
  let provider: FakeServer;
  let configurationId: string;
  let user: { id: string; raw: string; token: string };

  const spentOf = async (subjectId: string, period: 'DAILY' | 'MONTHLY') => {
    const response = await t.gql(BUDGETS);
    expect(response.errors).toBeUndefined();
    return response.data!.budgets.find((budget) => budget.subjectId === subjectId && budget.period === period)!.spent;
  };
  const counters = () => t.app.services.db.selectFrom('budget_counters').selectAll().execute();
  const runAs = async (token: string) => {
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt: 'spend' } } }),
    });
    return sseEvents(await response.text(), 'runAgent').at(-1);
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    provider = await startFakeServer(encodeOpenAi);
    const created = member(
      (await t.gql(SETUP, { provider: { name: 'spent', kind: 'OPENAI', baseUrl: `${provider.url}/v1`, apiKey: 'sk-test-spent-0123456789' } })).data?.createProvider,
      'Provider',
    );
    const model = member(
      (await t.gql(MODEL, { input: { providerId: created.id, name: 'spent-model', providerModelId: 'gpt-spent', inputPricePerMTok: 1, outputPricePerMTok: 2 } })).data?.createModel,
      'Model',
    );
    configurationId = member((await t.gql(CONFIGURATION, { input: { name: 'spent', modelId: model.id } })).data?.createConfiguration, 'Configuration').id;
    const payload = member((await t.gql(CREATE_USER, { name: 'spender' })).data?.createUser, 'CreateUserPayload');
    user = { id: payload.user.id, raw: decodeGlobalID(payload.user.id).id, token: payload.token };
  });
  afterAll(async () => {
    await provider?.close();
    await t?.stop();
  });

  it('should show zeros for a budget with nothing spent', async () => {
    expect((await t.gql(SET_BUDGET, { input: { subjectId: user.id, period: 'MONTHLY', maxRequests: 100 } })).data?.setBudget.__typename).toBe('Budget');
    expect(await spentOf(user.id, 'MONTHLY')).toEqual({ requests: 0, tokens: 0, cost: 0 });
  });

  it("should show the usage records of the current period while the budget has no counter, and not the previous period's", async () => {
    const start = periodStart('MONTHLY', new Date());
    const usage = (createdAt: Date, tokens: [number, number], cost: number) => ({
      id: crypto.randomUUID(),
      user_id: user.raw,
      configuration_id: decodeGlobalID(configurationId).id,
      run_id: null,
      model_id: null,
      prompt_tokens: tokens[0],
      completion_tokens: tokens[1],
      cost,
      created_at: createdAt,
    });
    await t.app.services.db
      .insertInto('usage_records')
      .values([usage(start, [1000, 500], 0.25), usage(new Date(start.getTime() - 1), [7000, 7000], 7)])
      .execute();
    expect(await counters()).toEqual([]);
    expect(await spentOf(user.id, 'MONTHLY')).toEqual({ requests: 1, tokens: 1500, cost: 0.25 });
  });

  it('should show the counter once a run was checked against the budget: the records before it plus the answered call', async () => {
    provider.enqueue({ reply: { content: 'done', usage: { promptTokens: 100, completionTokens: 50 } } });
    expect(await runAs(user.token)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    expect(await counters()).toHaveLength(1);
    const spent = await spentOf(user.id, 'MONTHLY');
    expect(spent).toMatchObject({ requests: 2, tokens: 1650 });
    expect(spent.cost).toBeCloseTo(0.25 + (100 * 1 + 50 * 2) / 1e6, 12);
  });

  it('should keep counting the request of a call that failed, which has no usage record, and give its planned cost back', async () => {
    const before = await spentOf(user.id, 'MONTHLY');
    provider.enqueue({ status: 400, body: '{"error":{"message":"bad request"}}' });
    expect(await runAs(user.token)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'FAILED' } });
    const after = await spentOf(user.id, 'MONTHLY');
    expect(after).toMatchObject({ requests: before.requests + 1, tokens: before.tokens });
    expect(after.cost).toBeCloseTo(before.cost, 12);
    const records = await t.app.services.db.selectFrom('usage_records').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', user.raw).where('created_at', '>=', periodStart('MONTHLY', new Date())).executeTakeFirstOrThrow();
    expect(Number(records.n)).toBe(before.requests);
  });

  it("should show each budget its own subject's spending: a configuration budget counts every user's runs of it", async () => {
    expect((await t.gql(SET_BUDGET, { input: { subjectId: configurationId, period: 'DAILY', maxRequests: 100 } })).data?.setBudget.__typename).toBe('Budget');
    // No counter for the new budget yet: the configuration's usage records of today.
    const fromRecords = await spentOf(configurationId, 'DAILY');
    const today = await t.app.services.db
      .selectFrom('usage_records')
      .select((eb) => [eb.fn.countAll<string>().as('requests'), eb.fn.sum<string>(eb('prompt_tokens', '+', eb.ref('completion_tokens'))).as('tokens')])
      .where('configuration_id', '=', decodeGlobalID(configurationId).id)
      .where('created_at', '>=', periodStart('DAILY', new Date()))
      .executeTakeFirstOrThrow();
    expect(fromRecords).toMatchObject({ requests: Number(today.requests), tokens: Number(today.tokens) });
    expect(fromRecords.requests).toBeGreaterThanOrEqual(1);
    provider.enqueue({ reply: { content: 'admin run', usage: { promptTokens: 10, completionTokens: 10 } } });
    expect(await runAs(t.adminToken)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    // Today's records and the admin's answered call (how many records today holds depends on the
    // date: the first test's record at the start of the month is today's on the 1st).
    expect(await spentOf(configurationId, 'DAILY')).toMatchObject({ requests: fromRecords.requests + 1, tokens: fromRecords.tokens + 20 });
    expect((await spentOf(user.id, 'MONTHLY')).requests).toBe(3);
  });
});

import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { createRunWriter, type RunWriter } from '../../src/db/run-batch-writer.ts';
import { createBudgetGuard, type BudgetSubject } from '../../src/services/budget-guard.ts';
import { setBudget } from '../../src/services/budgets.ts';
import { createUser } from '../../src/services/users.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';

const USAGE = { promptTokens: 100, completionTokens: 10, cost: 0.25 };

describe.each(TEST_DATABASES)('budget guard of one run on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;
  const errors: string[] = [];
  const logger = { error: (_object: object, message?: string) => void errors.push(message ?? '') };

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  /** A Db that counts the statements it sends. */
  const counting = () => {
    const state = { statements: 0 };
    const plugin: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => ((state.statements += 1), args.result),
    };
    return { db: db.withPlugin(plugin), state };
  };
  const subject = () => ({ userId: randomUUID(), configurationId: randomUUID(), modelId: randomUUID(), runId: randomUUID() });

  it('should read the budgets once per run and send no query at all for a pre-flight when none apply', async () => {
    const counted = counting();
    const guard = createBudgetGuard({ db: counted.db, writer: createRunWriter(db), logger }, subject());
    for (let call = 0; call < 5; call++) {
      expect(await guard.preflight(0.01)).toBeNull();
      await guard.record(USAGE);
    }
    expect(counted.state.statements).toBe(1);
  });

  it('should count the run’s own recorded calls: the pre-flight waits for the queued usage row', async () => {
    const who = { ...subject(), userId: (await createUser(db, { name: `budgeted-${randomUUID()}` })).user.id };
    await setBudget(db, { scope: 'USER', id: who.userId }, { period: 'DAILY', maxRequests: 2 });
    const guard = createBudgetGuard({ db, writer: createRunWriter(db), logger }, who);
    expect(await guard.preflight(0)).toBeNull();
    await guard.record(USAGE);
    expect(await guard.preflight(0)).toBeNull();
    await guard.record(USAGE);
    expect(await guard.preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'requests' });
    await guard.flushed();
    const rows = await db.selectFrom('usage_records').selectAll().where('run_id', '=', who.runId).execute();
    expect(rows.map((row) => [row.prompt_tokens, row.completion_tokens, row.cost])).toEqual([
      [100, 10, 0.25],
      [100, 10, 0.25],
    ]);
  });

  /** A user with a budget, and a way to make guards for runs of that user (on one configuration). */
  const budgeted = async (limits: { period?: 'DAILY' | 'MONTHLY'; maxRequests?: number; maxTokens?: number; maxCost?: number }) => {
    const userId = (await createUser(db, { name: `budgeted-${randomUUID()}` })).user.id;
    const budget = await setBudget(db, { scope: 'USER', id: userId }, { period: 'DAILY', ...limits });
    const configurationId = randomUUID();
    const writer = createRunWriter(db);
    const guardFor = (options: { now?: () => Date } = {}) =>
      createBudgetGuard({ db, writer, logger }, { userId, configurationId, modelId: randomUUID(), runId: randomUUID() } satisfies BudgetSubject, options);
    const counters = () => db.selectFrom('budget_counters').selectAll().where('budget_id', '=', budget.id).execute();
    return { userId, configurationId, budget, guardFor, counters };
  };

  it('should let exactly maxRequests of 12 pre-flights of 12 runs made at once through', async () => {
    const { guardFor, counters } = await budgeted({ maxRequests: 3 });
    const decisions = await Promise.all(Array.from({ length: 12 }, () => guardFor().preflight(0)));
    expect(decisions.filter((denial) => denial === null)).toHaveLength(3);
    expect(decisions.filter((denial) => denial !== null)).toEqual(Array.from({ length: 9 }, () => ({ scope: 'USER', period: 'DAILY', exceeded: 'requests' })));
    expect((await counters()).map((counter) => counter.requests)).toEqual([3]);
  });

  it('should reserve the planned cost at once: of 10 calls planned at 0.1 made at once under maxCost 0.5, exactly 5 pass', async () => {
    const { guardFor, counters } = await budgeted({ maxCost: 0.5 });
    const guards = Array.from({ length: 10 }, () => guardFor());
    const decisions = await Promise.all(guards.map((guard) => guard.preflight(0.1)));
    const passed = guards.filter((_, index) => decisions[index] === null);
    expect(passed).toHaveLength(5);
    expect(decisions.filter((denial) => denial !== null)).toEqual(Array.from({ length: 5 }, () => ({ scope: 'USER', period: 'DAILY', exceeded: 'cost' })));
    // Each call cost more than planned: the budget is exceeded by what the calls in flight cost
    // beyond their plan, and no further.
    await Promise.all(passed.map((guard) => guard.record({ promptTokens: 10, completionTokens: 5, cost: 0.12 })));
    await Promise.all(passed.map((guard) => guard.flushed()));
    const [counter] = await counters();
    expect(counter!.cost).toBeCloseTo(0.6, 9);
    expect(counter!.cost).toBeLessThanOrEqual(0.5 + passed.length * (0.12 - 0.1) + 1e-9);
    expect(await guardFor().preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'cost' });
  });

  it('should exceed maxTokens by at most the tokens of the calls in flight when 8 runs call until denied', async () => {
    const maxTokens = 1_000;
    const perCall = 70;
    const { guardFor, counters } = await budgeted({ maxTokens });
    let calls = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const guard = guardFor();
        while ((await guard.preflight(0)) === null) {
          calls += 1;
          await guard.record({ promptTokens: perCall - 10, completionTokens: 10, cost: 0 });
        }
        await guard.flushed();
      }),
    );
    const [counter] = await counters();
    expect(counter!.tokens).toBe(calls * perCall);
    expect(counter!.tokens).toBeGreaterThan(maxTokens);
    expect(counter!.tokens).toBeLessThanOrEqual(maxTokens + 8 * perCall);
    expect(counter!.requests).toBe(calls);
  });

  it('should count a call that was never answered as a request and give its planned cost back', async () => {
    const { guardFor, counters } = await budgeted({ maxRequests: 2, maxCost: 1 });
    const failed = guardFor();
    expect(await failed.preflight(0.8)).toBeNull();
    // The provider failed (or the run was cancelled): no usage to record; the run ends.
    await failed.flushed();
    expect((await counters()).map(({ requests, tokens, cost }) => ({ requests, tokens, cost }))).toEqual([{ requests: 1, tokens: 0, cost: 0 }]);
    const next = guardFor();
    expect(await next.preflight(0.8)).toBeNull();
    await next.record({ promptTokens: 1, completionTokens: 1, cost: 0.5 });
    expect(await next.preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'requests' });
  });

  it('should leave every budget untouched when one of them denies the call', async () => {
    const { configurationId, budget, guardFor } = await budgeted({ maxRequests: 10 });
    // The configuration is a bare id here (setBudget checks it exists): the budget row is all the guard reads.
    const configurationBudget = await db
      .insertInto('budgets')
      .values({ id: randomUUID(), scope: 'CONFIGURATION', subject_id: configurationId, period: 'MONTHLY', max_requests: 1, max_tokens: 0, max_cost: 0 })
      .returningAll()
      .executeTakeFirstOrThrow();
    const guard = guardFor();
    expect(await guard.preflight(0)).toBeNull();
    await guard.record(USAGE);
    expect(await guard.preflight(0)).toEqual({ scope: 'CONFIGURATION', period: 'MONTHLY', exceeded: 'requests' });
    expect(await guardFor().preflight(0)).toEqual({ scope: 'CONFIGURATION', period: 'MONTHLY', exceeded: 'requests' });
    const requestsOf = async (budgetId: string) =>
      (await db.selectFrom('budget_counters').select('requests').where('budget_id', '=', budgetId).executeTakeFirstOrThrow()).requests;
    expect(await requestsOf(budget.id)).toBe(1);
    expect(await requestsOf(configurationBudget.id)).toBe(1);
  });

  it('should apply a limit changed mid-period at once, to a run already going', async () => {
    const { userId, guardFor } = await budgeted({ maxRequests: 5 });
    const guard = guardFor();
    for (let call = 0; call < 2; call++) {
      expect(await guard.preflight(0)).toBeNull();
      await guard.record(USAGE);
    }
    await setBudget(db, { scope: 'USER', id: userId }, { period: 'DAILY', maxRequests: 2 });
    expect(await guard.preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'requests' });
  });

  it('should count the usage recorded before a budget was set in the same period', async () => {
    const userId = (await createUser(db, { name: `spent-before-${randomUUID()}` })).user.id;
    const configurationId = randomUUID();
    await db
      .insertInto('usage_records')
      .values([1, 2].map(() => ({ id: randomUUID(), user_id: userId, configuration_id: configurationId, prompt_tokens: 400, completion_tokens: 100, cost: 0.2 })))
      .execute();
    const budget = await setBudget(db, { scope: 'USER', id: userId }, { period: 'MONTHLY', maxRequests: 3, maxTokens: 2_000 });
    const guard = createBudgetGuard({ db, writer: createRunWriter(db), logger }, { userId, configurationId, modelId: randomUUID(), runId: randomUUID() });
    expect(await guard.preflight(0)).toBeNull();
    expect(await db.selectFrom('budget_counters').select(['requests', 'tokens', 'cost']).where('budget_id', '=', budget.id).executeTakeFirstOrThrow()).toEqual({
      requests: 3,
      tokens: 1_000,
      cost: expect.closeTo(0.4, 9),
    });
    await guard.record(USAGE);
    expect(await guard.preflight(0)).toEqual({ scope: 'USER', period: 'MONTHLY', exceeded: 'requests' });
  });

  it('should start a new counter when the period rolls over, and drop the old one', async () => {
    const { guardFor, counters } = await budgeted({ maxRequests: 1 });
    const today = new Date();
    const guard = guardFor({ now: () => today });
    expect(await guard.preflight(0)).toBeNull();
    await guard.record(USAGE);
    expect(await guard.preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'requests' });
    const tomorrow = new Date(today.getTime() + 24 * 60 * 60 * 1000);
    const later = guardFor({ now: () => tomorrow });
    expect(await later.preflight(0)).toBeNull();
    expect((await counters()).map((counter) => [counter.period_start.toISOString(), counter.requests])).toEqual([
      [new Date(Date.UTC(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth(), tomorrow.getUTCDate())).toISOString(), 1],
    ]);
  });

  it('should stop the run at its next pre-flight when a usage row could not be stored, and log it', async () => {
    const failing: RunWriter = {
      insertStep: async () => undefined,
      insertUsage: () => Promise.reject(new Error('usage table is gone')),
      expedite: () => undefined,
      pending: 0,
    };
    const guard = createBudgetGuard({ db, writer: failing, logger }, subject());
    expect(await guard.preflight(0)).toBeNull();
    await guard.record(USAGE);
    await guard.flushed();
    expect(errors).toContain('could not record the usage of a provider call; the run stops before its next call');
    await expect(guard.preflight(0)).rejects.toThrow('usage table is gone');
  });
});

import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInt8 } from '../../../src/db/create-db.ts';
import type { Db } from '../../../src/db/database.ts';
import { createRunWriter } from '../../../src/db/run-batch-writer.ts';
import { settleRun, settleStaleRuns } from '../../../src/db/repositories/run-settlement.ts';
import { findRunsByIds } from '../../../src/db/repositories/runs.ts';
import { sumUsageSince } from '../../../src/db/repositories/usage.ts';
import { createBudgetGuard } from '../../../src/services/budget-guard.ts';
import { setBudget } from '../../../src/services/budgets.ts';
import { createUser } from '../../../src/services/users.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';

/** Token counts past 2^31 - 1: one call is bounded only to a safe integer at the provider boundary. */
const THREE_BILLION = 3_000_000_000;
const INT32_MAX = 2 ** 31 - 1;

describe('bigint as read from PostgreSQL', () => {
  it('should read a safe integer as a number and anything larger as a BigInt, never rounded', () => {
    expect(parseInt8('3000000000')).toBe(THREE_BILLION);
    expect(parseInt8('-42')).toBe(-42);
    expect(parseInt8(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseInt8('9007199254740993')).toBe(9_007_199_254_740_993n);
  });
});

describe.each(TEST_DATABASES)('usage totals beyond 2^31 on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;
  const logger = { error: () => undefined };
  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  const newRun = async () => {
    const id = randomUUID();
    await db.insertInto('runs').values({ id, configuration_id: null, user_id: null, status: 'RUNNING', prompt: null, privacy_level: 'METADATA' }).execute();
    return id;
  };

  it('should read bigint the same way on both databases: a number while safe, a BigInt beyond', async () => {
    const { rows } = await sql<{ safe: unknown; huge: unknown }>`select ${THREE_BILLION}::bigint as safe, 9007199254740993::bigint as huge`.execute(db);
    expect(rows[0]).toEqual({ safe: THREE_BILLION, huge: 9_007_199_254_740_993n });
  });

  it('should store usage rows of more than 2^31 tokens through the run writer and sum them exactly', async () => {
    const userId = (await createUser(db, { name: `heavy-${randomUUID()}` })).user.id;
    const configurationId = randomUUID();
    const runId = await newRun();
    const writer = createRunWriter(db);
    const row = { userId, configurationId, runId, modelId: randomUUID(), promptTokens: THREE_BILLION, completionTokens: INT32_MAX, cost: 1.5 };
    await Promise.all([writer.insertUsage({ ...row, id: randomUUID() }), writer.insertUsage({ ...row, id: randomUUID() })]);
    const since = new Date(Date.now() - 60_000);
    expect(await sumUsageSince(db, { scope: 'USER', id: userId }, since)).toEqual({ requests: 2, tokens: 2 * (THREE_BILLION + INT32_MAX), cost: 3 });
    expect(await sumUsageSince(db, { scope: 'CONFIGURATION', id: configurationId }, since)).toMatchObject({ tokens: 2 * (THREE_BILLION + INT32_MAX) });
    // A budget set now counts them, and refuses the next call on tokens.
    const budget = await setBudget(db, { scope: 'USER', id: userId }, { period: 'DAILY', maxTokens: 2_000_000_000 });
    const guard = createBudgetGuard({ db, writer, logger }, { userId, configurationId, modelId: row.modelId, runId });
    expect(await guard.preflight(0)).toEqual({ scope: 'USER', period: 'DAILY', exceeded: 'tokens' });
    const counter = await db.selectFrom('budget_counters').select(['requests', 'tokens']).where('budget_id', '=', budget.id).executeTakeFirstOrThrow();
    expect(counter).toEqual({ requests: 2, tokens: 2 * (THREE_BILLION + INT32_MAX) });
  });

  it('should settle a run with more than 2^31 tokens, directly or from its usage rows, and read the totals back as numbers', async () => {
    const settledRun = await newRun();
    const settled = await settleRun(db, settledRun, {
      status: 'COMPLETED',
      terminationReason: 'COMPLETED',
      truncated: false,
      iterations: 3,
      finalContent: null,
      promptTokens: THREE_BILLION,
      completionTokens: THREE_BILLION + 1,
      estimatedCost: 2,
      errorMessage: null,
    });
    expect(settled).toMatchObject({ prompt_tokens: THREE_BILLION, completion_tokens: THREE_BILLION + 1 });

    const stale = await newRun();
    await db.updateTable('runs').set({ heartbeat_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', stale).execute();
    const usage = () => ({ id: randomUUID(), user_id: null, configuration_id: null, model_id: null, run_id: stale, prompt_tokens: INT32_MAX, completion_tokens: 1, cost: 0 });
    await db.insertInto('usage_records').values([usage(), usage()]).execute();
    expect((await settleStaleRuns(db, 30_000)).map((run) => run.id)).toEqual([stale]);
    const [interrupted] = await findRunsByIds(db, [stale]);
    expect(interrupted).toMatchObject({ termination_reason: 'INTERRUPTED', prompt_tokens: 2 * INT32_MAX, completion_tokens: 2 });
    expect(typeof interrupted!.prompt_tokens).toBe('number');
  });
});

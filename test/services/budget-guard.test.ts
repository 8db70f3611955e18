import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { createRunWriter, type RunWriter } from '../../src/db/run-batch-writer.ts';
import { createBudgetGuard } from '../../src/services/budget-guard.ts';
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

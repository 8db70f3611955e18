import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/database.ts';
import { createRunWriter } from '../../../src/db/run-batch-writer.ts';
import { releaseAbandonedReservation } from '../../../src/db/repositories/budget-counters.ts';
import { claimOrphanedRuns } from '../../../src/db/repositories/run-leases.ts';
import { insertRun } from '../../../src/db/repositories/runs.ts';
import { createBudgetGuard } from '../../../src/services/budget-guard.ts';
import { setBudget } from '../../../src/services/budgets.ts';
import { createUser } from '../../../src/services/users.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';

const USAGE = { promptTokens: 100, completionTokens: 10, cost: 0.25 };
const PLANNED = 0.5;

/**
 * Issue 27: a provider call in flight when its process died is made again by the process that takes
 * the run over; its reserved budget counts once. The reservation lives on the run's row too, and
 * whoever ends it first (the call's own usage, or the takeover giving it back) does so once.
 */
describe.each(TEST_DATABASES)('budget reservations held by runs on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;
  const logger = { error: () => undefined };

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  /** A user with a daily budget, one RUNNING run of theirs holding a lease, and a guard of that run. */
  async function budgetedRun() {
    const userId = (await createUser(db, { name: `reserving-${randomUUID()}` })).user.id;
    const budget = await setBudget(db, { scope: 'USER', id: userId }, { period: 'DAILY', maxCost: 100 });
    const run = await insertRun(db, {
      id: randomUUID(),
      configuration_id: null,
      user_id: userId,
      status: 'RUNNING',
      prompt: null,
      privacy_level: 'METADATA',
      tool_selection: null,
      lease: { owner: 'instance-a', ms: 15_000, checkpoint: 'sealed' },
    });
    const guard = () => createBudgetGuard({ db, writer: createRunWriter(db), logger }, { userId, configurationId: randomUUID(), modelId: randomUUID(), runId: run.id });
    const counter = async () => (await db.selectFrom('budget_counters').selectAll().where('budget_id', '=', budget.id).executeTakeFirstOrThrow());
    const held = async () => (await db.selectFrom('runs').select('budget_reservation').where('id', '=', run.id).executeTakeFirstOrThrow()).budget_reservation;
    return { run, guard, counter, held };
  }

  it('should hold the reservation on the run while its call is in flight, and end it with the call’s usage', async () => {
    const { guard, counter, held } = await budgetedRun();
    const live = guard();
    expect(await live.preflight(PLANNED)).toBeNull();
    expect(await held()).toMatchObject({ plannedCost: PLANNED });
    expect(await counter()).toMatchObject({ requests: 1, cost: PLANNED });
    await live.record(USAGE);
    await live.flushed();
    expect(await held()).toBeNull();
    expect(await counter()).toMatchObject({ requests: 1, tokens: 110, cost: USAGE.cost });
  });

  it('should give a dead call’s planned cost back once, and a late answer of the paused process then adds only its usage', async () => {
    const { run, guard, counter, held } = await budgetedRun();
    const paused = guard();
    expect(await paused.preflight(PLANNED)).toBeNull();
    // The process stops answering; the one that takes the run over gives the reservation back.
    expect(await releaseAbandonedReservation(db, run.id)).toBe(true);
    expect(await releaseAbandonedReservation(db, run.id)).toBe(false);
    expect(await held()).toBeNull();
    expect(await counter()).toMatchObject({ requests: 1, cost: 0 });
    // The paused process wakes with the answer: what it really spent counts, its reservation no longer.
    await paused.record(USAGE);
    await paused.flushed();
    expect(await counter()).toMatchObject({ requests: 1, tokens: 110, cost: USAGE.cost });
  });

  it('should give the reservation back when a run whose lease lapsed is claimed, so the call made again counts once', async () => {
    const { run, guard, counter, held } = await budgetedRun();
    expect(await guard().preflight(PLANNED)).toBeNull();
    await db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() - interval '1 second'` }).where('id', '=', run.id).execute();
    const [claimed] = await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: 15_000, limit: 100 });
    expect(claimed?.id).toBe(run.id);
    expect(await held()).toBeNull();
    expect(await counter()).toMatchObject({ requests: 1, cost: 0 });
    // The successor makes the call again: one planned cost reserved, replaced by its usage.
    const successor = guard();
    expect(await successor.preflight(PLANNED)).toBeNull();
    await successor.record(USAGE);
    await successor.flushed();
    expect(await counter()).toMatchObject({ requests: 2, cost: USAGE.cost });
  });
});

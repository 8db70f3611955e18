import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunsByIds, settleStaleRuns } from '../../../src/db/repositories/runs.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';

describe.each(TEST_DATABASES)('settling stale runs on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  beforeAll(async () => {
    opened = await openMigratedDb(kind);
  });
  afterAll(() => opened.dispose());

  it('should settle a run whose process stopped as INTERRUPTED with the usage its rows recorded, not 0', async () => {
    const { db } = opened.handle;
    const [stale, fresh] = [randomUUID(), randomUUID()];
    for (const id of [stale, fresh]) {
      await db.insertInto('runs').values({ id, configuration_id: null, user_id: null, status: 'RUNNING', prompt: null, privacy_level: 'METADATA' }).execute();
    }
    await db.updateTable('runs').set({ heartbeat_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', stale).execute();
    const usage = (run_id: string, prompt_tokens: number, completion_tokens: number, cost: number) => ({
      id: randomUUID(),
      user_id: null,
      configuration_id: null,
      model_id: null,
      run_id,
      prompt_tokens,
      completion_tokens,
      cost,
    });
    await db.insertInto('usage_records').values([usage(stale, 1_200, 80, 0.25), usage(stale, 1_500, 20, 0.5), usage(fresh, 9, 9, 9)]).execute();

    expect((await settleStaleRuns(db, 30_000)).map((run) => run.id)).toEqual([stale]);
    const [settled] = await findRunsByIds(db, [stale]);
    expect(settled).toMatchObject({ status: 'FAILED', termination_reason: 'INTERRUPTED', prompt_tokens: 2_700, completion_tokens: 100 });
    expect(settled!.estimated_cost).toBeCloseTo(0.75);
    const [untouched] = await findRunsByIds(db, [fresh]);
    expect(untouched).toMatchObject({ status: 'RUNNING', prompt_tokens: 0 });
  });
});

import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../../src/db/create-db.ts';
import { settleStaleRuns } from '../../../src/db/repositories/run-settlement.ts';
import { findRunsByIds, insertRunWithinCap } from '../../../src/db/repositories/runs.ts';
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

  it('should count the rounds whose answers were stored as its iterations, not 0, and not the synthesis call', async () => {
    const { db } = opened.handle;
    const configurationId = randomUUID();
    const providerId = randomUUID();
    const modelId = randomUUID();
    await db.insertInto('providers').values({ id: providerId, name: `p-${providerId}`, kind: 'SCRIPTED', settings: JSON.stringify({}) }).execute();
    await db.insertInto('models').values({ id: modelId, provider_id: providerId, name: `m-${modelId}`, provider_model_id: 'scripted' }).execute();
    await db.insertInto('configurations').values({ id: configurationId, name: `c-${configurationId}`, model_id: modelId, max_iterations: 2, allowed_tool_groups: JSON.stringify([]) }).execute();
    const [twoRounds, synthesised, suspendedBefore] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [twoRounds, synthesised, suspendedBefore]) {
      await db.insertInto('runs').values({ id, configuration_id: configurationId, user_id: null, status: 'RUNNING', prompt: null, privacy_level: 'METADATA' }).execute();
    }
    await db.updateTable('runs').set({ iterations: 2 }).where('id', '=', suspendedBefore).execute();
    const steps = (run_id: string, rounds: readonly number[]) =>
      rounds.flatMap((round, index) => [
        { run_id, sequence: 2 * index + 1, kind: 'REQUEST' as const, round, duration_ms: null, payload: JSON.stringify({}) },
        { run_id, sequence: 2 * index + 2, kind: 'LLM' as const, round, duration_ms: 5, payload: JSON.stringify({}) },
      ]);
    await db.insertInto('run_steps').values([...steps(twoRounds, [1, 2]), ...steps(synthesised, [1, 2, 3])]).execute();
    await db.updateTable('runs').set({ heartbeat_at: sql<Date>`now() - interval '1 hour'` }).where('id', 'in', [twoRounds, synthesised, suspendedBefore]).execute();

    await settleStaleRuns(db, 30_000);
    const settled = await findRunsByIds(db, [twoRounds, synthesised, suspendedBefore]);
    expect(Object.fromEntries(settled.map((run) => [run.id, [run.termination_reason, run.iterations]]))).toEqual({
      [twoRounds]: ['INTERRUPTED', 2],
      [synthesised]: ['INTERRUPTED', 2],
      [suspendedBefore]: ['INTERRUPTED', 2],
    });
  });
});

describe.each(TEST_DATABASES)('the running-runs cap on %s', (kind) => {
  const STARTS = 24;
  const CAP = 3;

  it(`should store exactly ${CAP} of ${STARTS} starts that reach the database at the same instant, on as many connections`, async () => {
    const opened = await openMigratedDb(kind);
    // On PostgreSQL a pool with a connection per start, so that the statements really run at once.
    const handle = opened.database.databaseUrl ? await createDb({ databaseUrl: opened.database.databaseUrl, dataDir: 'memory://', poolSize: STARTS }) : opened.handle;
    const blocker = opened.database.databaseUrl ? new pg.Client({ connectionString: opened.database.databaseUrl }) : null;
    try {
      const userId = randomUUID();
      await handle.db.insertInto('users').values({ id: userId, name: 'capped', is_admin: false, token_hash: randomUUID() }).execute();
      const start = () =>
        insertRunWithinCap(
          handle.db,
          { id: randomUUID(), configuration_id: null, user_id: userId, status: 'RUNNING', prompt: 'p', privacy_level: 'METADATA', tool_selection: null },
          CAP,
        );
      let starts: Promise<unknown>[];
      if (blocker) {
        // A table lock every insert waits for before it reads anything: released at once, the 24
        // statements count and insert together, and only the cap's lock keeps them apart.
        await blocker.connect();
        await blocker.query('begin; lock table runs in share mode');
        starts = Array.from({ length: STARTS }, start);
        for (let waited = 0; ; waited += 20) {
          const { rows } = await blocker.query(`select count(*)::int as n from pg_locks where relation = 'runs'::regclass and not granted`);
          if (rows[0].n >= STARTS || waited > 10_000) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await blocker.query('commit');
      } else {
        starts = Array.from({ length: STARTS }, start);
      }
      const created = (await Promise.all(starts)).filter((row) => row !== undefined);
      expect(created).toHaveLength(CAP);
      const stored = await handle.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      expect(Number(stored.n)).toBe(CAP);
    } finally {
      await blocker?.end();
      if (handle !== opened.handle) await handle.close();
      await opened.dispose();
    }
  }, 30_000);
});

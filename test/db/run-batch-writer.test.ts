import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { createRunWriter, type StepWrite, type UsageWrite } from '../../src/db/run-batch-writer.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';

/**
 * Counts the statements a Db executed; `holdFirst` keeps the first one from returning (in flight)
 * until it resolves.
 */
function counting(db: Db, options: { holdFirst?: Promise<void> } = {}) {
  const state = { statements: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (state.statements++ === 0) await options.holdFirst;
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), state };
}

const step = (runId: string, sequence: number): StepWrite => ({ runId, sequence, kind: 'LLM', round: 1, durationMs: 1.5, payload: { kind: 'LLM', sequence } });
const usage = (runId: string): UsageWrite => ({
  id: randomUUID(),
  userId: null,
  configurationId: randomUUID(),
  runId,
  modelId: randomUUID(),
  promptTokens: 10,
  completionTokens: 2,
  cost: 0.5,
});

describe.each(TEST_DATABASES)('run writer (group commit) on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  const newRuns = async (count: number) => {
    const ids = Array.from({ length: count }, () => randomUUID());
    await db
      .insertInto('runs')
      .values(ids.map((id) => ({ id, configuration_id: null, user_id: null, status: 'RUNNING' as const, prompt: null, privacy_level: 'METADATA' as const })))
      .execute();
    return ids;
  };
  const storedSteps = (runId: string) =>
    db.selectFrom('run_steps').select(['sequence', 'payload']).where('run_id', '=', runId).orderBy('sequence').execute();

  it('should send the steps and usage rows of runs queued in one turn as ONE statement', async () => {
    const counted = counting(db);
    const writer = createRunWriter(counted.db);
    const runs = await newRuns(8);
    await Promise.all(runs.flatMap((runId) => [writer.insertUsage(usage(runId)), writer.insertStep(step(runId, 1))]));
    expect(counted.state.statements).toBe(1);
    for (const runId of runs) expect((await storedSteps(runId)).map((row) => row.sequence)).toEqual([1]);
    const usageRows = await db.selectFrom('usage_records').select('run_id').where('run_id', 'in', runs).execute();
    expect(usageRows).toHaveLength(8);
    expect(writer.pending).toBe(0);
  });

  it('should queue rows that arrive while a statement is in flight for the next one, in order, within the row cap', async () => {
    let release = () => undefined as void;
    const counted = counting(db, { holdFirst: new Promise((resolve) => (release = resolve)) });
    const writer = createRunWriter(counted.db, { maxRowsPerStatement: 4 });
    const [runId] = await newRuns(1);
    const settledOrder: number[] = [];
    const first = writer.insertStep(step(runId!, 1)).then(() => settledOrder.push(1));
    writer.expedite(); // the first statement goes out after this turn, and is held on its way back
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 9 }, (_, index) => writer.insertStep(step(runId!, index + 2)).then(() => settledOrder.push(index + 2)));
    expect(writer.pending).toBe(10);
    release();
    await Promise.all([first, ...rest]);
    expect(counted.state.statements).toBe(1 + 3); // 1, then 9 rows in statements of at most 4
    expect(settledOrder).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await storedSteps(runId!)).map((row) => row.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  // PGlite has one connection: a held statement holds it, so nothing can go beside it there.
  const onPostgres = kind === 'postgres' ? it : () => undefined;
  onPostgres('should let a backlog of other runs go while a statement is in flight, but never a run’s rows in two statements at once', async () => {
    let release = () => undefined as void;
    const counted = counting(db, { holdFirst: new Promise((resolve) => (release = resolve)) });
    const writer = createRunWriter(counted.db, { minRowsBeside: 1 });
    const [held, other] = await newRuns(2);
    const settled: string[] = [];
    const first = writer.insertStep(step(held!, 1)).then(() => settled.push('held:1'));
    writer.expedite(); // statement 1 (run `held`) goes out after this turn and is held on its way back
    await new Promise((resolve) => setImmediate(resolve));
    const second = writer.insertStep(step(held!, 2)).then(() => settled.push('held:2'));
    const third = writer.insertStep(step(other!, 1)).then(() => settled.push('other:1'));
    writer.expedite();
    try {
      await third; // `other` did not wait for the held statement
      expect(settled).toEqual(['other:1']);
      // Statement 1 committed and waits on its way back; step 2 was not sent beside it.
      expect((await storedSteps(held!)).map((row) => row.sequence)).toEqual([1]);
    } finally {
      release();
    }
    await Promise.all([first, second]);
    expect(settled).toEqual(['other:1', 'held:1', 'held:2']);
    expect(counted.state.statements).toBe(3);
  });

  it('should gather a trickle behind the statement in flight rather than send it beside', async () => {
    let release = () => undefined as void;
    const counted = counting(db, { holdFirst: new Promise((resolve) => (release = resolve)) });
    const writer = createRunWriter(counted.db, { minRowsBeside: 3 });
    const runs = await newRuns(4);
    const first = writer.insertStep(step(runs[0]!, 1));
    writer.expedite();
    await new Promise((resolve) => setImmediate(resolve)); // statement 1 is in flight, held
    const trickle = [writer.insertStep(step(runs[1]!, 1)), writer.insertStep(step(runs[2]!, 1))];
    writer.expedite();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(counted.state.statements).toBe(1); // only the held one: two rows wait behind it
    } finally {
      release();
    }
    await Promise.all([first, ...trickle]);
    expect(counted.state.statements).toBe(2); // the held one, then the two together
    // A backlog (here 3 rows) goes beside a statement in flight.
    await Promise.all([writer.insertStep(step(runs[3]!, 1)), writer.insertStep(step(runs[1]!, 2)), writer.insertStep(step(runs[2]!, 2))]);
  });

  it('should hold a lone row for the group-commit window, and send it at once when someone waits for it', async () => {
    const counted = counting(db);
    const writer = createRunWriter(counted.db, { windowMs: 60_000 });
    const [runId] = await newRuns(1);
    let stored = false;
    const written = writer.insertStep(step(runId!, 1)).then(() => (stored = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([stored, counted.state.statements]).toEqual([false, 0]);
    writer.expedite();
    await written;
    expect(counted.state.statements).toBe(1);
  });

  it('should fail only the bad row of a statement the database refused, storing the other runs’ rows', async () => {
    const writer = createRunWriter(db);
    const [good, bad] = await newRuns(2);
    await writer.insertStep(step(bad!, 1));
    const results = await Promise.allSettled([writer.insertStep(step(good!, 1)), writer.insertStep(step(bad!, 1)), writer.insertUsage(usage(good!))]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await storedSteps(good!)).map((row) => row.sequence)).toEqual([1]);
    expect(await storedSteps(bad!)).toHaveLength(1);
  });

  it('should not retry a statement whose fate is unknown (connection lost), so nothing is stored twice', async () => {
    let statements = 0;
    const lostConnection = {
      executeQuery: () => {
        statements += 1;
        return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
      },
    } as unknown as Db;
    const writer = createRunWriter(lostConnection);
    const runs = await newRuns(3);
    const results = await Promise.allSettled(runs.map((runId) => writer.insertStep(step(runId, 1))));
    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    expect(statements).toBe(1);
    expect(writer.pending).toBe(0);
  });

  it('should store what PostgreSQL cannot (NUL, lone surrogates) as U+FFFD rather than lose the row', async () => {
    const writer = createRunWriter(db);
    const [runId] = await newRuns(1);
    await writer.insertStep({ ...step(runId!, 1), payload: { content: 'a\u0000b\ud800c' } });
    const [row] = await storedSteps(runId!);
    expect(row!.payload).toEqual({ content: 'a\ufffdb\ufffdc' });
  });
});

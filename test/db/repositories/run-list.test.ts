import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listRuns, listRunsQuery, type RunFilter, type RunKey } from '../../../src/db/repositories/run-list.ts';
import { NO_RUN_FILTER } from '../../../src/services/run-filter.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';

/**
 * The runs list's keyset pages (issue 14): newest first on (created_at, id), ties on created_at
 * broken by id in both directions, and a cursor the indexes take as an index condition (a deep
 * page must not filter every newer run; bench/bin/explain.ts shows it at 100 000 runs).
 */
describe.each(TEST_DATABASES)('the runs list on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  /** Newest first, as the list orders them: 30 runs over 10 instants, three runs at each. */
  let expected: { id: string; created_at: Date }[];
  const keyOf = (run: { id: string; created_at: Date }): RunKey => ({ id: run.id });

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    const base = Date.UTC(2026, 0, 1);
    const rows = Array.from({ length: 30 }, (_, index) => ({
      id: randomUUID(),
      configuration_id: null,
      user_id: null,
      status: 'COMPLETED' as const,
      prompt: null,
      privacy_level: 'METADATA' as const,
      created_at: new Date(base + Math.floor(index / 3) * 1000),
    }));
    await opened.handle.db.insertInto('runs').values(rows).execute();
    expected = rows
      .map(({ id, created_at }) => ({ id, created_at }))
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1));
  });
  afterAll(() => opened.dispose());

  const page = async (options: { after?: RunKey; before?: RunKey; limit: number; inverted: boolean }) =>
    (await listRuns(opened.handle.db, { filter: NO_RUN_FILTER, after: options.after ?? null, before: options.before ?? null, limit: options.limit, inverted: options.inverted })).map((run) => run.id);

  it('should page forward through runs that share a created_at, each exactly once', async () => {
    const seen: string[] = [];
    let after: RunKey | undefined;
    for (;;) {
      const ids = await page({ after, limit: 4, inverted: false });
      if (ids.length === 0) break;
      seen.push(...ids);
      after = keyOf(expected.find((run) => run.id === ids.at(-1))!);
    }
    expect(seen).toEqual(expected.map((run) => run.id));
  });

  it('should page backward from a cursor in the middle of a tie, nearest first', async () => {
    const cursor = expected[13]!; // the second of the three runs at its instant
    expect(await page({ before: keyOf(cursor), limit: 5, inverted: true })).toEqual(expected.slice(8, 13).reverse().map((run) => run.id));
    expect(await page({ after: keyOf(cursor), limit: 5, inverted: false })).toEqual(expected.slice(14, 19).map((run) => run.id));
  });

  it('should give the cursor to the index as a condition, not as a filter over every newer run', async () => {
    const plan = (query: { compile(): CompiledQuery }) => {
      const compiled = query.compile();
      return opened.handle.db.transaction().execute(async (trx) => {
        // A table this small is read whole whatever its indexes: ask for the plan an index gives
        // (and the ordered one: a bitmap scan then a sort of a few dozen rows costs about the same).
        await sql`set local enable_seqscan = off`.execute(trx);
        await sql`set local enable_bitmapscan = off`.execute(trx);
        const result = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
        return result.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    };
    const cursor = keyOf(expected[13]!);
    const forward = await plan(listRunsQuery(opened.handle.db, { filter: NO_RUN_FILTER, after: cursor, before: null, limit: 21, inverted: false }));
    expect(forward).toMatch(/Index Scan Backward using runs_created_id_idx/);
    expect(forward).toMatch(/Index Cond: \(ROW\(created_at, id\) < ROW\(/);
    const byUser: RunFilter = { ...NO_RUN_FILTER, userId: randomUUID() };
    const backward = await plan(listRunsQuery(opened.handle.db, { filter: byUser, after: null, before: cursor, limit: 21, inverted: true }));
    expect(backward).toMatch(/Index Scan using runs_user_created_id_idx/);
    expect(backward).toMatch(/Index Cond: \(\(user_id = .*\) AND \(ROW\(created_at, id\) > ROW\(/);
  });
});

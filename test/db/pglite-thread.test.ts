import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGliteThread, type PGliteThread } from '../../src/db/pglite-thread.ts';
import { pgliteTemplate } from '../helpers/pglite-template.ts';

/**
 * The embedded database in a worker thread (src/db/pglite-thread.ts): what crosses the thread keeps
 * its type, an error keeps PostgreSQL's fields, and the server's event loop runs while a statement
 * does — the reason it exists (in the server's own thread, a statement stopped the loop).
 */
describe('PGlite in a worker thread', () => {
  let client: PGliteThread;
  beforeAll(async () => {
    client = await openPGliteThread('memory://', { startParams: ['-c', 'shared_buffers=16MB'], dump: await pgliteTemplate() });
  });
  afterAll(() => client?.close());

  it('should hand values both ways with their types: dates, big integers, bytes, JSON, nulls', async () => {
    const when = new Date('2026-12-01T10:00:00.123Z');
    const { rows } = await client.query(
      `select $1::timestamptz as at, 9007199254740993::int8 as big, 42::int8 as small, $2::bytea as bytes, $3::jsonb as doc, null::text as nothing, $4::text as text`,
      [when, new Uint8Array([0, 1, 255]), JSON.stringify({ a: [1, 'two'] }), 'héllo ✓'],
    );
    expect(rows).toEqual([{ at: when, big: 9007199254740993n, small: 42, bytes: new Uint8Array([0, 1, 255]), doc: { a: [1, 'two'] }, nothing: null, text: 'héllo ✓' }]);
    await client.query(`create temporary table t (v int)`);
    expect((await client.query(`insert into t select generate_series(1, 3)`)).rows).toEqual([]);
    expect((await client.query(`update t set v = v + 1`)).affectedRows).toBe(3);
  });

  it("should reject with PostgreSQL's error: message, SQLSTATE and fields", async () => {
    await client.query(`create temporary table uniq (id int primary key)`);
    await client.query(`insert into uniq values (1)`);
    const error = await client.query(`insert into uniq values (1)`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '23505', constraint: 'uniq_pkey', message: expect.stringContaining('duplicate key') });
    // The connection is still good.
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('should answer statements sent together, each its own', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => client.query('select $1::int * 2 as doubled', [index])));
    expect(answers.map((answer) => answer.rows[0])).toEqual(Array.from({ length: 50 }, (_, index) => ({ doubled: index * 2 })));
  });

  it('should leave the event loop running while a statement runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    try {
      // Long enough to span many ticks on any machine (about half a second here).
      await client.query(`select count(*) from generate_series(1, 3000000) as s(i) where i % 7 = 3`);
    } finally {
      clearInterval(timer);
    }
    // In the server's own thread the statement would hold the loop for its whole length: no tick.
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it('should refuse statements once closed, with a clear error, and close twice without harm', async () => {
    const other = await openPGliteThread('memory://', { startParams: [], dump: await pgliteTemplate() });
    expect((await other.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
    await Promise.all([other.close(), other.close()]);
    await expect(other.query('select 1')).rejects.toThrow('the embedded database is closed');
  }, 60_000);

  it('should reject the opening when the dump is cut short (the caller then makes the cluster another way)', async () => {
    const template = pgliteTemplate();
    const cut = template.slice(0, Math.floor(template.size / 2 / 512) * 512 + 100);
    await expect(openPGliteThread('memory://', { startParams: [], dump: cut })).rejects.toThrow('the dump is damaged');
  }, 60_000);

  it('should reject the opening with PGlite’s error when the dump is not a database', async () => {
    await expect(openPGliteThread('memory://', { startParams: [], dump: new Blob(['not a cluster']) })).rejects.toThrow();
  }, 60_000);
});

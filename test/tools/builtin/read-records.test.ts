import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/database.ts';
import { saveGrant } from '../../../src/db/repositories/grants.ts';
import { SEED_CUSTOMER_COUNT, SEED_ORDER_COUNT, type SeedReport, seedRecords } from '../../../src/db/repositories/records-seed.ts';
import { NO_ACTOR_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import { MASKED_CELL } from '../../../src/redaction/masking.ts';
import { NULL_CELL, readRecordsTool, tableNotAvailable } from '../../../src/tools/builtin/read-records.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { TableArtifact } from '../../../src/tools/result.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { insertActor, invoke, jsonLines, toolContext, toolDataOver, untouchableData } from './helpers.ts';

const LONG_BODY = 'x'.repeat(1_000);
const EXACT_BODY = 'y'.repeat(300);
// 301 astral characters: 602 UTF-16 units, so a unit-based cut would split a pair.
const EMOJI_BODY = '😀'.repeat(301);

describe.each(TEST_DATABASES)('read_records (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let db: Db;
  let firstSeed: SeedReport;
  let data: ToolData;
  let admin: Actor;
  let reader: Actor;
  let stranger: Actor;

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    db = opened.handle.db;
    firstSeed = await seedRecords(db);
    await sql`create table records.notes (id integer primary key, body text, secret_answer text, note_kind text)`.execute(db);
    await sql`insert into records.notes values
      (1, ${LONG_BODY}, 'blue', 'long'), (2, ${EXACT_BODY}, 'green', 'exact'), (3, ${EMOJI_BODY}, null, 'emoji'),
      (4, ${'line one\nline "two"\t|'}, 'red', null)`.execute(db);
    // A table in another schema must never be reachable, admin or not.
    await sql`create table public.hidden_stuff (id integer primary key)`.execute(db);
    admin = await insertActor(db, 'root', true);
    reader = await insertActor(db, 'reader', false);
    stranger = await insertActor(db, 'stranger', false);
    await saveGrant(db, reader.id, 'customers', 'READ');
    await saveGrant(db, reader.id, 'notes', 'WRITE');
    // A grant for a table that does not exist (dropped later, say) must not reveal anything either.
    await saveGrant(db, reader.id, 'ghost', 'READ');
    data = toolDataOver(db, kind);
  });

  afterAll(async () => {
    await dispose();
  });

  const read = (actor: Actor | null, args: Record<string, unknown>) => invoke(readRecordsTool, args, toolContext(data, actor));

  it('should seed idempotently', async () => {
    expect(firstSeed).toEqual({ customersInserted: SEED_CUSTOMER_COUNT, ordersInserted: SEED_ORDER_COUNT });
    expect(await seedRecords(db)).toEqual({ customersInserted: 0, ordersInserted: 0 });
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from records.orders`.execute(db);
    expect(rows[0]?.n).toBe(String(SEED_ORDER_COUNT));
  });

  it('should read a granted table for a non-admin, in primary-key order', async () => {
    const result = await read(reader, { table: 'customers', limit: 3 });
    expect(result.isError).toBe(false);
    const [columns, ...rows] = jsonLines(result.content);
    expect(columns).toEqual(['id', 'name', 'email', 'password_hash', 'created_at']);
    expect(rows.map((row) => row[0])).toEqual(['1', '2', '3']);
    expect(rows[0]?.[1]).toBe('Ada Lovelace');
    expect(rows[0]?.[2]).toMatch(/^[a-z.]+@[a-z.]+$/);
  });

  it('should refuse an ungranted table with the same message as a missing table', async () => {
    const ungranted = await read(reader, { table: 'orders' });
    const missing = await read(reader, { table: 'no_such_table' });
    const grantedButMissing = await read(reader, { table: 'ghost' });
    const strangersView = await read(stranger, { table: 'customers' });
    expect(ungranted.isError).toBe(true);
    expect(ungranted.content).toBe(tableNotAvailable('orders'));
    expect(ungranted.content).toBe('Error: table "orders" is not available.');
    expect(missing.content).toBe(tableNotAvailable('no_such_table'));
    expect(grantedButMissing.content).toBe(tableNotAvailable('ghost'));
    expect(strangersView.content).toBe(tableNotAvailable('customers'));
    // Same text but for the echoed name: nothing tells the two cases apart.
    expect(ungranted.content.replace('orders', 'T')).toBe(missing.content.replace('no_such_table', 'T'));
    expect(ungranted.artifacts).toEqual([]);
  });

  it('should let an admin read any records table without a grant, and nothing outside the schema', async () => {
    const orders = await read(admin, { table: 'orders', limit: 2 });
    expect(orders.isError).toBe(false);
    expect(jsonLines(orders.content)[0]).toEqual(['id', 'customer_id', 'total', 'status', 'created_at']);
    for (const table of ['users', 'hidden_stuff', 'public.hidden_stuff', 'table_grants', 'pg_catalog.pg_user']) {
      expect((await read(admin, { table })).content).toBe(tableNotAvailable(table));
    }
  });

  it('should accept a schema-qualified name', async () => {
    const result = await read(reader, { table: 'records.customers', limit: 1 });
    expect(result.isError).toBe(false);
    expect(jsonLines(result.content)[1]?.[0]).toBe('1');
  });

  it('should mask credential-like columns in the text and the artifact', async () => {
    const result = await read(admin, { table: 'customers', limit: 50 });
    const [columns, ...rows] = jsonLines(result.content);
    const hashAt = columns!.indexOf('password_hash');
    expect(rows).toHaveLength(SEED_CUSTOMER_COUNT);
    for (const row of rows) expect(row[hashAt]).toBe(MASKED_CELL);
    expect(result.content).toContain('Masked credential-like columns: password_hash.');
    expect(result.content).not.toContain('$2b$');
    expect(JSON.stringify(result.artifacts)).not.toContain('$2b$');

    const notes = await read(admin, { table: 'notes' });
    const [noteColumns, ...noteRows] = jsonLines(notes.content);
    const answerAt = noteColumns!.indexOf('secret_answer');
    // NULL is masked too: not even the absence of a credential is shown.
    expect(noteRows.map((row) => row[answerAt])).toEqual([MASKED_CELL, MASKED_CELL, MASKED_CELL, MASKED_CELL]);
    expect(notes.content).not.toContain('blue');
  });

  it('should cap cells at 300 characters without splitting a character', async () => {
    const result = await read(reader, { table: 'notes' });
    const [, long, exact, emoji] = jsonLines(result.content);
    expect(long?.[1]).toBe(`${'x'.repeat(299)}…`);
    expect(exact?.[1]).toBe(EXACT_BODY);
    expect([...emoji![1]!]).toHaveLength(300);
    expect(emoji?.[1]).toBe(`${'😀'.repeat(299)}…`);
    // A lone surrogate would make encodeURIComponent throw.
    expect(() => encodeURIComponent(emoji![1]!)).not.toThrow();
  });

  it('should build the table artifact from exactly the cells of the text lines', async () => {
    for (const [actor, table] of [
      [reader, 'customers'],
      [reader, 'notes'],
      [admin, 'orders'],
    ] as const) {
      const result = await read(actor, { table, limit: 50 });
      expect(result.artifacts).toHaveLength(1);
      const artifact = result.artifacts[0] as TableArtifact;
      expect(artifact.type).toBe('table');
      const [columns, ...rows] = jsonLines(result.content);
      expect(artifact.data.columns).toEqual(columns);
      expect(artifact.data.rows).toEqual(rows);
    }
  });

  it('should show a NULL cell as NULL and keep line breaks inside one line', async () => {
    const result = await read(reader, { table: 'notes', filters: [{ column: 'id', value: 4 }] });
    const [columns, row] = jsonLines(result.content);
    expect(row?.[columns!.indexOf('note_kind')]).toBe(NULL_CELL);
    expect(row?.[1]).toBe('line one\nline "two"\t|');
    expect(result.content.split('\n').filter((line) => line.startsWith('['))).toHaveLength(2);
  });

  it('should apply equality filters compared as text, ANDed', async () => {
    const paid = jsonLines((await read(admin, { table: 'orders', filters: [{ column: 'status', value: 'paid' }], limit: 50 })).content);
    expect(paid.length).toBeGreaterThan(1);
    for (const row of paid.slice(1)) expect(row[3]).toBe('paid');

    const byCustomer = jsonLines(
      (
        await read(admin, {
          table: 'orders',
          filters: [
            { column: 'customer_id', value: 8 },
            { column: 'status', value: 'paid' },
          ],
        })
      ).content,
    );
    for (const row of byCustomer.slice(1)) expect([row[1], row[3]]).toEqual(['8', 'paid']);
    expect(byCustomer.length).toBeGreaterThan(1);

    const total = jsonLines((await read(admin, { table: 'orders', filters: [{ column: 'total', value: '89.18' }] })).content);
    expect(total.slice(1).map((row) => row[0])).toEqual(['1']);

    const nulls = jsonLines((await read(reader, { table: 'notes', filters: [{ column: 'note_kind', value: null }] })).content);
    expect(nulls.slice(1).map((row) => row[0])).toEqual(['4']);
  });

  it('should page with limit and offset and say whether more rows follow', async () => {
    const first = await read(admin, { table: 'orders', limit: 5 });
    expect(jsonLines(first.content).slice(1).map((row) => row[0])).toEqual(['1', '2', '3', '4', '5']);
    expect(first.content).toContain('rows 1-5');
    expect(first.content).toContain('offset 5');

    const last = await read(admin, { table: 'orders', limit: 5, offset: 48 });
    expect(jsonLines(last.content).slice(1).map((row) => row[0])).toEqual(['49', '50']);
    expect(last.content).toContain('No more rows.');

    const beyond = await read(admin, { table: 'orders', offset: 10_000 });
    expect(beyond.isError).toBe(false);
    expect(jsonLines(beyond.content)).toHaveLength(1);
    expect((beyond.artifacts[0] as TableArtifact).data.rows).toEqual([]);

    const byDefault = await read(admin, { table: 'orders' });
    expect(jsonLines(byDefault.content)).toHaveLength(1 + 20);
  });

  it('should refuse out-of-bounds arguments at validation', () => {
    const filter = { column: 'status', value: 'paid' };
    const invalid = [
      { table: 'orders', limit: 51 },
      { table: 'orders', limit: 0 },
      { table: 'orders', limit: 2.5 },
      { table: 'orders', offset: 10_001 },
      { table: 'orders', offset: -1 },
      { table: 'orders', filters: Array.from({ length: 6 }, () => filter) },
      { table: 'orders', filters: [{ column: 'status' }] },
      { table: 'orders', filters: [{ column: 'status', value: { $ne: 1 } }] },
      { table: '' },
      { table: 'orders', unexpected: true },
      {},
    ];
    for (const args of invalid) expect(readRecordsTool.parameters.safeParse(args).success, JSON.stringify(args)).toBe(false);
    expect(readRecordsTool.parameters.safeParse({ table: 'orders', filters: Array.from({ length: 5 }, () => filter), limit: 50, offset: 10_000 }).success).toBe(true);
  });

  it('should refuse a filter on an unknown column, and on a masked one', async () => {
    const unknown = await read(reader, { table: 'customers', filters: [{ column: 'nope', value: '1' }] });
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toContain('column "nope" is not available');
    // Filtering on a masked column would reveal its value one guess at a time.
    const oracle = await read(admin, { table: 'customers', filters: [{ column: 'password_hash', value: '$2b$12$x' }] });
    expect(oracle.isError).toBe(true);
    expect(oracle.content).toContain('cannot be filtered on');
  });

  it('should treat SQL injection in table, column and value as plain names and values', async () => {
    const tables = [
      'customers; drop table records.orders; --',
      'customers" ; drop table records.orders; --',
      'orders"--',
      "customers' or '1'='1",
      'CUSTOMERS',
      '../customers',
    ];
    for (const table of tables) {
      const result = await read(reader, { table });
      expect(result.content).toBe(tableNotAvailable(table));
    }
    const columns = ['status" = status or "1', "status = 'paid' or 1=1 --", 'status)::text; drop table records.orders; --'];
    for (const column of columns) {
      const result = await read(admin, { table: 'orders', filters: [{ column, value: 'x' }] });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(`column "${column}" is not available`);
    }
    for (const value of ["' or '1'='1", "paid'; drop table records.orders; --", '1) or (1=1']) {
      const result = await read(admin, { table: 'orders', filters: [{ column: 'status', value }] });
      expect(result.isError).toBe(false);
      expect(jsonLines(result.content)).toHaveLength(1);
    }
    const intact = await read(admin, { table: 'orders', limit: 50 });
    expect(jsonLines(intact.content)).toHaveLength(1 + SEED_ORDER_COUNT);
  });

  it('should refuse without an acting user and read nothing', async () => {
    const { data: untouchable, touched } = untouchableData();
    const result = await invoke(readRecordsTool, { table: 'customers' }, toolContext(untouchable, null));
    expect(result.isError).toBe(true);
    expect(result.content).toBe(NO_ACTOR_ERROR);
    expect(touched).toEqual([]);
  });
});

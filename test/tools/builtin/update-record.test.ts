import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/database.ts';
import { saveGrant } from '../../../src/db/repositories/grants.ts';
import { seedRecords } from '../../../src/db/repositories/records-seed.ts';
import { NO_ACTOR_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import {
  MAX_CHANGES,
  MAX_PREVIEW_LINE_CHARS,
  MAX_PREVIEW_LINES,
  updateRecordTool,
} from '../../../src/tools/builtin/update-record.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { TableArtifact } from '../../../src/tools/result.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { insertActor, invoke, toolContext, toolDataOver, untouchableData } from './helpers.ts';

const WIDE_COLUMNS = Array.from({ length: MAX_CHANGES + 1 }, (_unused, index) => `c${index + 1}`);

describe.each(TEST_DATABASES)('update_record (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let db: Db;
  let data: ToolData;
  let admin: Actor;
  let writer: Actor;
  let reader: Actor;
  let stranger: Actor;

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    db = opened.handle.db;
    await seedRecords(db);
    await sql`create table records.gadgets (
      id integer primary key, price integer, active boolean, label varchar(5),
      doubled integer generated always as (price * 2) stored, api_token text)`.execute(db);
    await sql`insert into records.gadgets (id, price, active, label, api_token) values (1, 10, false, 'abc', 'tok-1')`.execute(db);
    await sql`create table ${sql.raw(`records.wide (id integer primary key, ${WIDE_COLUMNS.map((c) => `${c} text`).join(', ')})`)}`.execute(db);
    await sql`insert into records.wide (id, c1) values (1, 'old')`.execute(db);
    admin = await insertActor(db, 'root', true);
    writer = await insertActor(db, 'writer', false);
    reader = await insertActor(db, 'reader', false);
    stranger = await insertActor(db, 'stranger', false);
    for (const table of ['customers', 'orders', 'gadgets', 'wide', 'ghost']) await saveGrant(db, writer.id, table, 'WRITE');
    for (const table of ['customers', 'orders']) await saveGrant(db, reader.id, table, 'READ');
    data = toolDataOver(db, kind);
  });

  afterAll(async () => {
    await dispose();
  });

  const update = (actor: Actor | null, args: Record<string, unknown>) => invoke(updateRecordTool, args, toolContext(data, actor));
  const preview = (actor: Actor | null, args: Record<string, unknown>) =>
    updateRecordTool.preview!(updateRecordTool.parameters.parse(args), toolContext(data, actor));
  const mayRun = (actor: Actor | null, table: string) =>
    updateRecordTool.mayRun!(
      updateRecordTool.parameters.parse({ table, key: { column: 'id', value: 1 }, changes: { name: 'x' } }),
      toolContext(data, actor),
    );

  /** Every row of a records table as JSON text, in id order: to prove nothing changed. */
  async function snapshot(table: string): Promise<string[]> {
    const { rows } = await sql<{ row: string }>`select to_jsonb(t)::text as row from ${sql.id('records', table)} t order by id`.execute(db);
    return rows.map((row) => row.row);
  }

  async function cell(table: string, column: string, id: number): Promise<string | null> {
    const { rows } = await sql<{ value: string | null }>`
      select ${sql.id(column)}::text as value from ${sql.id('records', table)} where id = ${id}`.execute(db);
    return rows[0]!.value;
  }

  it('should update the row for a user with a WRITE grant, and say what changed', async () => {
    const before = await cell('customers', 'email', 3);
    const result = await update(writer, { table: 'customers', key: { column: 'id', value: 3 }, changes: { email: 'grace@navy.example' } });
    expect(result.isError).toBe(false);
    expect(result.content).toBe(`Updated customers id=3: email "${before}" → "grace@navy.example"`);
    expect(await cell('customers', 'email', 3)).toBe('grace@navy.example');
    expect(result.artifacts).toHaveLength(1);
    const artifact = result.artifacts[0] as TableArtifact;
    expect(artifact.type).toBe('table');
    expect(artifact.data).toEqual({ columns: ['column', 'before', 'after'], rows: [['email', before, 'grace@navy.example']] });
  });

  it('should refuse a user with only a READ grant and change nothing', async () => {
    const before = await snapshot('customers');
    const result = await update(reader, { table: 'customers', key: { column: 'id', value: 4 }, changes: { name: 'Mallory' } });
    expect(result.isError).toBe(true);
    expect(result.content).toBe('Error: table "customers" is not available for writing. Nothing was changed.');
    expect(result.artifacts).toEqual([]);
    expect(await snapshot('customers')).toEqual(before);
  });

  it('should let an admin update any records table without a grant', async () => {
    const result = await update(admin, { table: 'records.orders', key: { column: 'id', value: '2' }, changes: { status: 'shipped' } });
    expect(result.isError).toBe(false);
    expect(await cell('orders', 'status', 2)).toBe('shipped');
    // Nothing outside the records schema, admin or not.
    for (const table of ['users', 'table_grants', 'public.users']) {
      const refused = await update(admin, { table, key: { column: 'name', value: 'root' }, changes: { is_admin: 'false' } });
      expect(refused.content).toBe(`Error: table "${table.replace('records.', '')}" is not available for writing. Nothing was changed.`);
    }
  });

  it('should refuse without an acting user and read nothing', async () => {
    const { data: untouchable, touched } = untouchableData();
    const args = { table: 'customers', key: { column: 'id', value: 1 }, changes: { name: 'x' } };
    const ctx = toolContext(untouchable, null);
    const result = await invoke(updateRecordTool, args, ctx);
    expect(result.isError).toBe(true);
    expect(result.content).toBe(NO_ACTOR_ERROR);
    const parsed = updateRecordTool.parameters.parse(args);
    expect(await updateRecordTool.preview!(parsed, ctx)).toBe('Preview unavailable: no signed-in user.');
    expect(await updateRecordTool.mayRun!(parsed, ctx)).toBe(false);
    expect(touched).toEqual([]);
  });

  it('should refuse a missing table and an ungranted one with the same message', async () => {
    const change = { key: { column: 'id', value: 1 }, changes: { name: 'x' } };
    const missing = await update(writer, { table: 'no_such_table', ...change });
    const grantedButMissing = await update(writer, { table: 'ghost', ...change });
    const ungranted = await update(stranger, { table: 'customers', ...change });
    const readOnly = await update(reader, { table: 'orders', ...change });
    const same = (content: string, table: string) => content.replace(`"${table}"`, '"T"');
    expect(missing.isError).toBe(true);
    expect(same(missing.content, 'no_such_table')).toBe('Error: table "T" is not available for writing. Nothing was changed.');
    expect(same(grantedButMissing.content, 'ghost')).toBe(same(missing.content, 'no_such_table'));
    expect(same(ungranted.content, 'customers')).toBe(same(missing.content, 'no_such_table'));
    expect(same(readOnly.content, 'orders')).toBe(same(missing.content, 'no_such_table'));
    expect(await preview(stranger, { table: 'customers', ...change })).toBe(
      'Preview unavailable: table "customers" is not available for writing.',
    );
  });

  it('should refuse an unknown column, as key or as change', async () => {
    const before = await snapshot('customers');
    const changed = await update(writer, { table: 'customers', key: { column: 'id', value: 1 }, changes: { name: 'x', nope: 'y' } });
    expect(changed.content).toBe('Error: column "nope" is not available in table "customers". Nothing was changed.');
    const keyed = await update(writer, { table: 'customers', key: { column: 'uid', value: 1 }, changes: { name: 'x' } });
    expect(keyed.content).toBe('Error: column "uid" is not available in table "customers". Nothing was changed.');
    expect(await snapshot('customers')).toEqual(before);
  });

  it('should refuse a key that matches no row or several rows, and change nothing', async () => {
    const before = await snapshot('orders');
    const none = await update(writer, { table: 'orders', key: { column: 'id', value: 999 }, changes: { status: 'paid' } });
    expect(none.isError).toBe(true);
    expect(none.content).toBe('Error: no row matches id = 999. Nothing was changed.');

    const { rows } = await sql<{ n: string }>`select count(*)::text as n from records.orders where status = 'paid'`.execute(db);
    expect(Number(rows[0]!.n)).toBeGreaterThan(1);
    const many = await update(writer, { table: 'orders', key: { column: 'status', value: 'paid' }, changes: { total: '1.00' } });
    expect(many.isError).toBe(true);
    expect(many.content).toBe(`Error: ${rows[0]!.n} rows match status = paid; the key must match exactly one row. Nothing was changed.`);
    expect(await snapshot('orders')).toEqual(before);
  });

  it('should protect credential-like columns, read-only columns and the key column', async () => {
    const customers = await snapshot('customers');
    const gadgets = await snapshot('gadgets');
    const cases: [Record<string, unknown>, string][] = [
      [
        { table: 'customers', key: { column: 'id', value: 1 }, changes: { password_hash: 'hunter2' } },
        'Error: column "password_hash" holds credentials and cannot be changed. Nothing was changed.',
      ],
      [
        { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { api_token: 'stolen' } },
        'Error: column "api_token" holds credentials and cannot be changed. Nothing was changed.',
      ],
      [
        // A credential as the key would confirm a guessed secret.
        { table: 'customers', key: { column: 'password_hash', value: '$2b$12$x' }, changes: { name: 'x' } },
        'Error: column "password_hash" holds credentials and cannot be used as the key. Nothing was changed.',
      ],
      [
        { table: 'customers', key: { column: 'id', value: 1 }, changes: { name: 'x', id: '99' } },
        'Error: column "id" is the key and cannot be changed. Nothing was changed.',
      ],
      [
        { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { doubled: '5' } },
        'Error: column "doubled" is read-only and cannot be changed. Nothing was changed.',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await update(admin, args);
      expect(result.isError).toBe(true);
      expect(result.content).toBe(message);
    }
    expect(await snapshot('customers')).toEqual(customers);
    expect(await snapshot('gadgets')).toEqual(gadgets);
  });

  it('should cast values to the column type', async () => {
    const result = await update(writer, {
      table: 'orders',
      key: { column: 'id', value: 5 },
      changes: { total: '42', customer_id: '4' },
    });
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^Updated orders id=5: total "[\d.]+" → "42\.00", customer_id "\d+" → "4"$/);
    const { rows } = await sql<{ total: string; doubled: string; customer_id: number }>`
      select total::text as total, (total * 2)::text as doubled, customer_id from records.orders where id = 5`.execute(db);
    expect(rows[0]).toEqual({ total: '42.00', doubled: '84.00', customer_id: 4 });

    const gadget = await update(writer, {
      table: 'gadgets',
      key: { column: 'id', value: 1 },
      changes: { price: 21, active: true, label: null },
    });
    expect(gadget.isError).toBe(false);
    expect(gadget.content).toBe('Updated gadgets id=1: price "10" → "21", active "false" → "true", label "abc" → NULL');
    expect(await cell('gadgets', 'doubled', 1)).toBe('42');
    expect(await cell('gadgets', 'label', 1)).toBeNull();
  });

  it('should turn a value the column refuses into a clean error result', async () => {
    const orders = await snapshot('orders');
    const gadgets = await snapshot('gadgets');
    const invalidNumber = await update(writer, { table: 'orders', key: { column: 'id', value: 6 }, changes: { status: 'paid', total: '4x2' } });
    expect(invalidNumber.isError).toBe(true);
    expect(invalidNumber.content).toMatch(/^Error: the database refused the value of column "total": invalid input syntax for type numeric: "4x2"\. Nothing was changed\.$/);

    const outOfRange = await update(writer, { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { price: '99999999999' } });
    expect(outOfRange.content).toContain('the database refused the value of column "price"');
    const notBoolean = await update(writer, { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { active: 'maybe' } });
    expect(notBoolean.content).toContain('the database refused the value of column "active"');
    // Too long for varchar(5): the cast passes, the assignment refuses.
    const tooLong = await update(writer, { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { label: 'abcdef' } });
    expect(tooLong.isError).toBe(true);
    expect(tooLong.content).toMatch(/^Error: the database refused the change: value too long .*\. Nothing was changed\.$/);
    // Constraint violations: a missing customer, a taken e-mail, NULL in a NOT NULL column.
    const foreignKey = await update(writer, { table: 'orders', key: { column: 'id', value: 6 }, changes: { customer_id: '999' } });
    expect(foreignKey.content).toMatch(/^Error: the database refused the change: .*foreign key.*Nothing was changed\.$/);
    const taken = await cell('customers', 'email', 2);
    const unique = await update(writer, { table: 'customers', key: { column: 'id', value: 1 }, changes: { email: taken } });
    expect(unique.content).toMatch(/^Error: the database refused the change: duplicate key value .*Nothing was changed\.$/);
    expect(unique.content).not.toContain(taken!);
    const notNull = await update(writer, { table: 'customers', key: { column: 'id', value: 1 }, changes: { name: null } });
    expect(notNull.content).toMatch(/^Error: the database refused the change: .*not-null.*Nothing was changed\.$/);

    expect(await snapshot('orders')).toEqual(orders);
    expect(await snapshot('gadgets')).toEqual(gadgets);
  });

  it('should treat SQL injection in table, column and value as plain names and values', async () => {
    const orders = await snapshot('orders');
    for (const table of ['customers; drop table records.orders; --', 'customers" set name = \'x\' --', "orders' or '1'='1"]) {
      const result = await update(writer, { table, key: { column: 'id', value: 1 }, changes: { name: 'x' } });
      expect(result.content).toBe(`Error: table ${JSON.stringify(table)} is not available for writing. Nothing was changed.`);
    }
    for (const column of ['name" = \'x\', "email', 'name = name; drop table records.orders; --']) {
      const changed = await update(writer, { table: 'customers', key: { column: 'id', value: 1 }, changes: { [column]: 'x' } });
      expect(changed.content).toBe(`Error: column ${JSON.stringify(column)} is not available in table "customers". Nothing was changed.`);
      const keyed = await update(writer, { table: 'customers', key: { column, value: 1 }, changes: { name: 'x' } });
      expect(keyed.content).toBe(`Error: column ${JSON.stringify(column)} is not available in table "customers". Nothing was changed.`);
    }
    for (const value of ["1' or '1'='1", '1 or 1=1', '1; drop table records.orders; --']) {
      const result = await update(writer, { table: 'customers', key: { column: 'id', value }, changes: { name: 'x' } });
      expect(result.content).toBe(`Error: no row matches id = ${JSON.stringify(value)}. Nothing was changed.`);
    }
    const payload = "Robert'); drop table records.orders; --";
    const stored = await update(writer, { table: 'customers', key: { column: 'id', value: 7 }, changes: { name: payload } });
    expect(stored.isError).toBe(false);
    expect(await cell('customers', 'name', 7)).toBe(payload);
    expect(await snapshot('orders')).toEqual(orders);
  });

  it('should mask secret shapes in the values it shows (result, artifact, preview), as read_records does', async () => {
    const key = ['sk', 'proj', 'A1b2C3d4E5f6G7h8J9k0'].join('-');
    const change = { table: 'customers', key: { column: 'id', value: 5 }, changes: { name: `key ${key}` } };
    const shown = await preview(writer, change);
    expect(shown).not.toContain(key);
    expect(shown).toContain('"key ***"');
    const result = await update(writer, change);
    expect(result.isError).toBe(false);
    expect(JSON.stringify(result)).not.toContain(key);
    expect(result.content).toContain('"key ***"');
    // The row holds what was asked: masking is for what tools show, not what they write.
    expect(await cell('customers', 'name', 5)).toBe(`key ${key}`);
  });

  it('should preview the change before it runs, and change nothing', async () => {
    const before = await snapshot('customers');
    const name = await cell('customers', 'name', 8);
    const email = await cell('customers', 'email', 8);
    const text = await preview(writer, {
      table: 'customers',
      key: { column: 'id', value: 8 },
      changes: { name: 'Margaret H.', email: null },
    });
    expect(text).toBe(`Update table customers where id = 8:\nname: "${name}" → "Margaret H."\nemail: "${email}" → NULL`);
    // The new value as the column's type prints it.
    expect(await preview(writer, { table: 'orders', key: { column: 'id', value: 9 }, changes: { total: '7' } })).toMatch(
      /^Update table orders where id = 9:\ntotal: "[\d.]+" → "7"$/,
    );
    expect(await snapshot('customers')).toEqual(before);
  });

  it('should bound the preview: at most 20 lines of 500 characters, line breaks escaped', async () => {
    const long = `${'z'.repeat(1_000)}\nc2: "forged" → "line"`;
    const changes = Object.fromEntries(WIDE_COLUMNS.slice(0, MAX_CHANGES).map((column) => [column, long]));
    const text = await preview(writer, { table: 'wide', key: { column: 'id', value: 1 }, changes });
    const lines = text.split('\n');
    expect(lines.length).toBeLessThanOrEqual(MAX_PREVIEW_LINES);
    expect(lines[0]).toBe('Update table wide where id = 1:');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(MAX_PREVIEW_LINE_CHARS);
    expect(lines[1]).toMatch(/^c1: "old" → "z+…"$/);
    // Every column is named, the last two sharing the last line.
    for (const column of WIDE_COLUMNS.slice(0, MAX_CHANGES)) expect(text).toContain(`${column}: `);
    expect(lines.at(-1)).toMatch(/^c19: NULL → "z+…"; c20: NULL → "z+…"$/);
    expect(text).not.toContain('forged');
    expect(await cell('wide', 'c1', 1)).toBe('old');

    const crafted = await preview(writer, { table: 'wide', key: { column: 'id', value: 1 }, changes: { c2: 'a\nc3: "x" → "y"' } });
    expect(crafted).toBe('Update table wide where id = 1:\nc2: NULL → "a\\nc3: \\"x\\" → \\"y\\""');
  });

  it('should explain a refusal in the preview instead of throwing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ table: 'customers', key: { column: 'id', value: 999 }, changes: { name: 'x' } }, 'Preview unavailable: no row matches id = 999.'],
      [{ table: 'ghost', key: { column: 'id', value: 1 }, changes: { name: 'x' } }, 'Preview unavailable: table "ghost" is not available for writing.'],
      [
        { table: 'customers', key: { column: 'id', value: 1 }, changes: { password_hash: 'x' } },
        'Preview unavailable: column "password_hash" holds credentials and cannot be changed.',
      ],
      [
        { table: 'orders', key: { column: 'status', value: 'pending' }, changes: { total: '1' } },
        'Preview unavailable: 8 rows match status = pending; the key must match exactly one row.',
      ],
      [
        { table: 'orders', key: { column: 'id', value: 1 }, changes: { total: 'lots' } },
        'Preview unavailable: the database refused the value of column "total": invalid input syntax for type numeric: "lots".',
      ],
      [
        { table: 'gadgets', key: { column: 'id', value: 1 }, changes: { price: 'a\nb' } },
        'Preview unavailable: the database refused the value of column "price": invalid input syntax for type integer: "a\\u000ab".',
      ],
    ];
    for (const [args, message] of cases) expect(await preview(writer, args)).toBe(message);
  });

  it('should let mayRun answer true only for an admin or a WRITE grant', async () => {
    expect(await mayRun(admin, 'customers')).toBe(true);
    expect(await mayRun(admin, 'no_such_table')).toBe(true);
    expect(await mayRun(writer, 'customers')).toBe(true);
    expect(await mayRun(writer, 'records.customers')).toBe(true);
    expect(await mayRun(writer, 'users')).toBe(false);
    expect(await mayRun(reader, 'customers')).toBe(false);
    expect(await mayRun(stranger, 'customers')).toBe(false);
    expect(await mayRun(null, 'customers')).toBe(false);
  });

  it('should bound the number of changes in the data layer too, whoever calls it', async () => {
    const key = { column: 'id', value: '1' };
    const tooMany = Object.fromEntries(WIDE_COLUMNS.map((column) => [column, 'x']));
    expect(await data.records.updateRow(admin, { table: 'wide', key, changes: {} })).toEqual({ error: 'changeCount', count: 0 });
    expect(await data.records.updateRow(admin, { table: 'wide', key, changes: tooMany })).toEqual({
      error: 'changeCount',
      count: MAX_CHANGES + 1,
    });
    expect(await data.records.previewUpdate(admin, { table: 'wide', key, changes: tooMany })).toEqual({
      error: 'changeCount',
      count: MAX_CHANGES + 1,
    });
    expect(await data.records.updateRow(admin, { table: 'wide', key, changes: { c21: 'last' } })).toEqual({
      updated: 1,
      table: 'wide',
      keyColumn: 'id',
      keyValue: '1',
      changes: [{ column: 'c21', before: null, after: 'last' }],
    });
  });

  it('should refuse out-of-bounds arguments at validation', () => {
    const key = { column: 'id', value: 1 };
    const tooMany = Object.fromEntries(WIDE_COLUMNS.map((column) => [column, 'x']));
    const invalid = [
      { table: 'wide', key, changes: {} },
      { table: 'wide', key, changes: tooMany },
      { table: 'wide', key, changes: { c1: { $set: 1 } } },
      { table: 'wide', key: { column: 'id' }, changes: { c1: 'x' } },
      { table: 'wide', key: { column: 'id', value: null }, changes: { c1: 'x' } },
      { table: 'wide', changes: { c1: 'x' } },
      { table: '', key, changes: { c1: 'x' } },
      { table: 'wide', key, changes: { c1: 'x' }, surprise: 1 },
    ];
    for (const args of invalid) expect(updateRecordTool.parameters.safeParse(args).success, JSON.stringify(args)).toBe(false);
    const twenty = Object.fromEntries(WIDE_COLUMNS.slice(0, MAX_CHANGES).map((column) => [column, null]));
    expect(updateRecordTool.parameters.safeParse({ table: 'wide', key, changes: twenty }).success).toBe(true);
  });
});

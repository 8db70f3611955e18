import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

const GRANT = `mutation Grant($id: ID!, $table: String!) {
  grantTable(userId: $id, table: $table) {
    __typename
    ... on User { tableGrants { table mode } }
    ... on ValidationError { message issues { path message } }
    ... on NotFoundError { message }
  }
}`;

describe.each(TEST_DATABASES)('grantTable on %s', (kind) => {
  let t: TestApp;
  let userId: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    const created = await t.gql(`mutation { createUser(input: { name: "reader" }) { ... on CreateUserPayload { user { id } } } }`);
    userId = created.data.createUser.user.id;
  });
  afterAll(() => t.stop());

  it('should refuse a grant on a fresh database, saying the records schema has no tables and how to get some', async () => {
    const result = await t.gql(GRANT, { id: userId, table: 'customers' });
    expect(result.errors).toBeUndefined();
    expect(result.data.grantTable.__typename).toBe('ValidationError');
    expect(result.data.grantTable.message).toBe(
      'No table "customers" in the "records" schema. The "records" schema has no tables yet: create them there, or run `npm run seed` for the demo tables customers and orders.',
    );
    expect(result.data.grantTable.issues).toEqual([{ path: ['table'], message: result.data.grantTable.message }]);
  });

  it('should refuse a table that does not exist, naming it and the tables that do, and store nothing', async () => {
    await seedRecords(t.app.services.db);
    const result = await t.gql(GRANT, { id: userId, table: 'custmers' });
    expect(result.data.grantTable).toMatchObject({
      __typename: 'ValidationError',
      message: 'No table "custmers" in the "records" schema. Tables you can grant: customers, orders.',
    });
    const user = await t.gql(`query Reader($id: ID!) { node(id: $id) { ... on User { tableGrants { table } } } }`, { id: userId });
    expect(user.data.node.tableGrants).toEqual([]);
  });

  it('should grant a table that exists, views included', async () => {
    await sql`create view records.big_orders as select * from records.orders`.execute(t.app.services.db);
    expect((await t.gql(GRANT, { id: userId, table: 'customers' })).data.grantTable.tableGrants).toEqual([{ table: 'customers', mode: 'READ' }]);
    expect((await t.gql(GRANT, { id: userId, table: 'big_orders' })).data.grantTable.tableGrants).toEqual([
      { table: 'big_orders', mode: 'READ' },
      { table: 'customers', mode: 'READ' },
    ]);
  });

  it('should still refuse an unknown user before looking at the table', async () => {
    const missing = Buffer.from('User:00000000-0000-4000-8000-000000000000').toString('base64');
    expect((await t.gql(GRANT, { id: missing, table: 'nope' })).data.grantTable.__typename).toBe('NotFoundError');
  });

  it('should still revoke a grant whose table was dropped since', async () => {
    await sql`drop view records.big_orders`.execute(t.app.services.db);
    const revoked = await t.gql(`mutation Revoke($id: ID!) { revokeTable(userId: $id, table: "big_orders") { ... on User { tableGrants { table } } } }`, { id: userId });
    expect(revoked.data.revokeTable.tableGrants).toEqual([{ table: 'customers' }]);
  });
});

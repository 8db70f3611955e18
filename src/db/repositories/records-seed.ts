import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../database.ts';
import { RECORDS_SCHEMA } from './operator-tables.ts';

/**
 * Demo data for the `records` schema: 20 customers and 50 orders, the same rows on every run, so
 * `read_records` has something to show and tests have known cells. Idempotent: tables are created
 * if missing and rows are inserted by fixed id, skipping ids already present (an operator's edits
 * to the demo rows are kept).
 */

interface SeedDatabase {
  'records.customers': { id: number; name: string; email: string; password_hash: string; created_at: Date };
  'records.orders': { id: number; customer_id: number; total: string; status: string; created_at: Date };
}

export const SEED_CUSTOMER_COUNT = 20;
export const SEED_ORDER_COUNT = 50;
export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'] as const;

const CUSTOMER_NAMES = [
  'Ada Lovelace',
  'Alan Turing',
  'Grace Hopper',
  'Katherine Johnson',
  'Edsger Dijkstra',
  'Barbara Liskov',
  'Donald Knuth',
  'Margaret Hamilton',
  'Ken Thompson',
  'Frances Allen',
  'John McCarthy',
  'Radia Perlman',
  'Dennis Ritchie',
  'Hedy Lamarr',
  'Tim Berners-Lee',
  'Shafi Goldwasser',
  'Leslie Lamport',
  'Annie Easley',
  'Niklaus Wirth',
  'Sophie Wilson',
];

const MAIL_DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example.com'];

const DAY_MS = 24 * 60 * 60 * 1000;
const CUSTOMERS_SINCE = Date.UTC(2025, 0, 6, 9, 0, 0);
const ORDERS_SINCE = Date.UTC(2025, 1, 1, 8, 30, 0);

/** A bcrypt-looking value derived from the id: realistic enough to be masked, useless as a credential. */
function fakePasswordHash(id: number): string {
  const digest = createHash('sha512').update(`airlock-demo-customer-${id}`).digest('base64').replace(/[+/=]/g, '');
  return `$2b$12$${digest.slice(0, 53)}`;
}

export function seedCustomers(): SeedDatabase['records.customers'][] {
  return CUSTOMER_NAMES.slice(0, SEED_CUSTOMER_COUNT).map((name, index) => {
    const id = index + 1;
    const [first, ...rest] = name.toLowerCase().replace(/[^a-z\s-]/g, '').split(/\s+/);
    return {
      id,
      name,
      email: `${first}.${rest.join('').replace(/-/g, '')}@${MAIL_DOMAINS[index % MAIL_DOMAINS.length]}`,
      password_hash: fakePasswordHash(id),
      created_at: new Date(CUSTOMERS_SINCE + index * 3 * DAY_MS),
    };
  });
}

export function seedOrders(): SeedDatabase['records.orders'][] {
  return Array.from({ length: SEED_ORDER_COUNT }, (_unused, index) => {
    const id = index + 1;
    const cents = ((id * 7_919) % 40_000) + 999;
    return {
      id,
      customer_id: ((id * 7) % SEED_CUSTOMER_COUNT) + 1,
      total: (cents / 100).toFixed(2),
      status: ORDER_STATUSES[id % ORDER_STATUSES.length]!,
      created_at: new Date(ORDERS_SINCE + index * 13 * 60 * 60 * 1000),
    };
  });
}

export interface SeedReport {
  readonly customersInserted: number;
  readonly ordersInserted: number;
}

/** Creates `records.customers` and `records.orders` if missing and adds the demo rows not yet there. */
export async function seedRecords(db: Db): Promise<SeedReport> {
  // The records tables are the operator's, not part of the service's typed Database.
  const records = db as unknown as Kysely<SeedDatabase>;
  return records.transaction().execute(async (trx) => {
    await trx.schema.createSchema(RECORDS_SCHEMA).ifNotExists().execute();
    await trx.schema
      .createTable('records.customers')
      .ifNotExists()
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('email', 'text', (col) => col.notNull().unique())
      .addColumn('password_hash', 'text', (col) => col.notNull())
      .addColumn('created_at', 'timestamptz', (col) => col.notNull())
      .execute();
    await trx.schema
      .createTable('records.orders')
      .ifNotExists()
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('customer_id', 'integer', (col) => col.notNull().references('records.customers.id').onDelete('cascade'))
      .addColumn('total', 'numeric(10, 2)', (col) => col.notNull())
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('created_at', 'timestamptz', (col) => col.notNull())
      .execute();

    const customers = await trx
      .insertInto('records.customers')
      .values(seedCustomers())
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    const orders = await trx
      .insertInto('records.orders')
      .values(seedOrders())
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    return { customersInserted: customers.length, ordersInserted: orders.length };
  });
}

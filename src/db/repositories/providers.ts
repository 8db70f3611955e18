import { onlyUuids } from '../errors.ts';
import { sql } from 'kysely';
import type { Db, NewProvider, ProviderRow, ProviderUpdate } from '../database.ts';

export async function listProviders(db: Db): Promise<ProviderRow[]> {
  return db.selectFrom('providers').selectAll().orderBy('name').execute();
}

export async function findProvidersByIds(db: Db, ids: readonly string[]): Promise<ProviderRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('providers').selectAll().where('id', 'in', valid).execute();
}

export async function insertProvider(db: Db, provider: NewProvider): Promise<ProviderRow> {
  return db.insertInto('providers').values(provider).returningAll().executeTakeFirstOrThrow();
}

export async function updateProvider(db: Db, id: string, changes: ProviderUpdate): Promise<ProviderRow | undefined> {
  return db
    .updateTable('providers')
    .set({ ...changes, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProvider(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('providers').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countModelsOfProvider(db: Db, providerId: string): Promise<number> {
  const row = await db
    .selectFrom('models')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('provider_id', '=', providerId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Rows whose settings still carry `headers` in plaintext (written before they were sealed). */
export async function listProvidersWithPlaintextHeaders(db: Db): Promise<ProviderRow[]> {
  return db.selectFrom('providers').selectAll().where(sql<boolean>`settings ? 'headers'`).execute();
}

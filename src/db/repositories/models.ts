import { onlyUuids } from '../errors.ts';
import { sql } from 'kysely';
import type { Db, ModelRow, ModelUpdate, NewModel } from '../database.ts';

export async function listModels(db: Db): Promise<ModelRow[]> {
  return db.selectFrom('models').selectAll().orderBy('name').execute();
}

export async function findModelsByIds(db: Db, ids: readonly string[]): Promise<ModelRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('models').selectAll().where('id', 'in', valid).execute();
}

export async function listModelsOfProvider(db: Db, providerId: string): Promise<ModelRow[]> {
  return db.selectFrom('models').selectAll().where('provider_id', '=', providerId).orderBy('name').execute();
}

export async function insertModel(db: Db, model: NewModel): Promise<ModelRow> {
  return db.insertInto('models').values(model).returningAll().executeTakeFirstOrThrow();
}

export async function updateModel(db: Db, id: string, changes: ModelUpdate): Promise<ModelRow | undefined> {
  return db
    .updateTable('models')
    .set({ ...changes, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteModel(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countConfigurationsOfModel(db: Db, modelId: string): Promise<number> {
  const row = await db
    .selectFrom('configurations')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('model_id', '=', modelId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

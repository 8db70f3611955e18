import { onlyUuids } from '../errors.ts';
import { sql } from 'kysely';
import type { ConfigurationRow, ConfigurationUpdate, Db, NewConfiguration } from '../database.ts';

export async function listConfigurations(db: Db): Promise<ConfigurationRow[]> {
  return db.selectFrom('configurations').selectAll().orderBy('name').execute();
}

export async function findConfigurationsByIds(db: Db, ids: readonly string[]): Promise<ConfigurationRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('configurations').selectAll().where('id', 'in', valid).execute();
}

export async function findConfigurationByName(db: Db, name: string): Promise<ConfigurationRow | undefined> {
  return db.selectFrom('configurations').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Skill ids of each configuration, in their attached order. */
export async function findSkillIdsOfConfigurations(db: Db, configurationIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(configurationIds.map((id) => [id, []]));
  if (configurationIds.length === 0) return result;
  const rows = await db
    .selectFrom('configuration_skills')
    .select(['configuration_id', 'skill_id'])
    .where('configuration_id', 'in', configurationIds)
    .orderBy('configuration_id')
    .orderBy('position')
    .execute();
  for (const row of rows) result.get(row.configuration_id)?.push(row.skill_id);
  return result;
}

/** Inserts a configuration and its skills in one transaction. */
export async function insertConfiguration(db: Db, configuration: NewConfiguration, skillIds: readonly string[]): Promise<ConfigurationRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('configurations').values(configuration).returningAll().executeTakeFirstOrThrow();
    await replaceSkills(trx, row.id, skillIds);
    return row;
  });
}

/** Updates a configuration; `skillIds` undefined leaves its skills as they are. */
export async function updateConfiguration(
  db: Db,
  id: string,
  changes: ConfigurationUpdate,
  skillIds: readonly string[] | undefined,
): Promise<ConfigurationRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('configurations')
      .set({ ...changes, updated_at: sql`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (row && skillIds !== undefined) await replaceSkills(trx, id, skillIds);
    return row;
  });
}

async function replaceSkills(db: Db, configurationId: string, skillIds: readonly string[]): Promise<void> {
  await db.deleteFrom('configuration_skills').where('configuration_id', '=', configurationId).execute();
  if (skillIds.length === 0) return;
  await db
    .insertInto('configuration_skills')
    .values(skillIds.map((skillId, position) => ({ configuration_id: configurationId, skill_id: skillId, position })))
    .execute();
}

/** Deletes a configuration with its budgets (they name it by id, without a foreign key). */
export async function deleteConfiguration(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('budgets').where('scope', '=', 'CONFIGURATION').where('subject_id', '=', id).execute();
    const result = await trx.deleteFrom('configurations').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

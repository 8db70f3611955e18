import { onlyUuids } from '../errors.ts';
import { sql } from 'kysely';
import type { Db, NewSkill, SkillRow, SkillUpdate } from '../database.ts';

export async function listSkills(db: Db): Promise<SkillRow[]> {
  return db.selectFrom('skills').selectAll().orderBy('name').execute();
}

export async function findSkillsByIds(db: Db, ids: readonly string[]): Promise<SkillRow[]> {
  const valid = onlyUuids(ids);
  if (valid.length === 0) return [];
  return db.selectFrom('skills').selectAll().where('id', 'in', valid).execute();
}

export async function insertSkill(db: Db, skill: NewSkill): Promise<SkillRow> {
  return db.insertInto('skills').values(skill).returningAll().executeTakeFirstOrThrow();
}

export async function updateSkill(db: Db, id: string, changes: SkillUpdate): Promise<SkillRow | undefined> {
  return db
    .updateTable('skills')
    .set({ ...changes, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSkill(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('skills').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db, SkillRow, SkillUpdate } from '../db/database.ts';
import * as skills from '../db/repositories/skills.ts';
import { NotFoundError } from '../errors.ts';
import { nullishShape, parseInput, requireId, uniquely } from './validate.ts';

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const body = z.string().max(100_000, 'must be at most 100000 characters');
/** `null` = the skill has no opinion about tools; `[]` = it allows none. */
const allowedTools = z
  .array(z.string().trim().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'must be a tool name'))
  .max(500, 'must list at most 500 tools')
  .transform((names) => [...new Set(names)]);
/** Trust levels are ordered integers; a configuration's trust floor excludes skills below it. */
const trustLevel = z.number().int('must be a whole number').min(0, 'must be at least 0').max(100, 'must be at most 100');

const optional = { allowedTools, trustLevel, enabled: z.boolean() };
const createSchema = z.object({ name, body, ...nullishShape(optional) });
const updateSchema = z.object(nullishShape({ name, body, ...optional }));

export async function createSkill(db: Db, input: unknown): Promise<SkillRow> {
  const data = parseInput(createSchema, input);
  return uniquely(`A skill named "${data.name}" already exists.`, () =>
    skills.insertSkill(db, {
      id: randomUUID(),
      name: data.name,
      body: data.body,
      allowed_tools: data.allowedTools == null ? null : JSON.stringify(data.allowedTools),
      trust_level: data.trustLevel ?? 0,
      enabled: data.enabled ?? true,
    }),
  );
}

export async function updateSkill(db: Db, id: string, input: Record<string, unknown>): Promise<SkillRow> {
  requireId('Skill', id);
  const data = parseInput(updateSchema, input);
  const changes: SkillUpdate = {};
  if (data.name != null) changes.name = data.name;
  if (data.body != null) changes.body = data.body;
  if ('allowedTools' in input && input.allowedTools !== undefined) {
    changes.allowed_tools = data.allowedTools == null ? null : JSON.stringify(data.allowedTools);
  }
  if (data.trustLevel != null) changes.trust_level = data.trustLevel;
  if (data.enabled != null) changes.enabled = data.enabled;
  const row = await uniquely(`A skill named "${data.name ?? ''}" already exists.`, () => skills.updateSkill(db, id, changes));
  if (!row) throw new NotFoundError('Skill', id);
  return row;
}

export async function deleteSkill(db: Db, id: string): Promise<string> {
  requireId('Skill', id);
  if (!(await skills.deleteSkill(db, id))) throw new NotFoundError('Skill', id);
  return id;
}

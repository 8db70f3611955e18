import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ConfigurationRow, ConfigurationUpdate, Db } from '../db/database.ts';
import { PRIVACY_LEVELS } from '../runtime/privacy.ts';
import { DEFAULT_MAX_REMOTE_TOOL_CALLS } from '../runtime/loop-session.ts';
import { DEFAULT_TRUNCATION, TRUNCATION_MODES } from '../tools/bounds.ts';
import * as configurations from '../db/repositories/configurations.ts';
import * as models from '../db/repositories/models.ts';
import * as skills from '../db/repositories/skills.ts';
import { NotFoundError } from '../errors.ts';
import { isUuid, nullishShape, parseInput, requireId, uniquely } from './validate.ts';

export const DEFAULT_MAX_ITERATIONS = 5;

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const fields = {
  systemPrompt: z.string().max(100_000, 'must be at most 100000 characters'),
  temperature: z.number().finite('must be a finite number').min(0, 'must be at least 0').max(2, 'must be at most 2'),
  maxTokens: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000'),
  /** Tool rounds per run; the cap exists so a looping model cannot spend without bound. */
  maxIterations: z.number().int('must be a whole number').min(1, 'must be at least 1').max(50, 'must be at most 50'),
  allowedToolGroups: z
    .array(z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'))
    .max(100, 'must list at most 100 groups')
    .transform((groups) => [...new Set(groups)]),
  skillIds: z.array(z.string()).max(100, 'must list at most 100 skills').transform((ids) => [...new Set(ids)]),
  trustFloor: z.number().int('must be a whole number').min(0, 'must be at least 0').max(100, 'must be at most 100'),
  privacyLevel: z.enum(PRIVACY_LEVELS),
  quarantineToolOutput: z.boolean(),
  truncation: z.enum(TRUNCATION_MODES),
  requireSecondApprover: z.boolean(),
  /** Calls of remote (MCP-imported) tools per run; the cap bounds what a looping model can send out. */
  maxRemoteToolCalls: z.number().int('must be a whole number').min(0, 'must be at least 0').max(1_000, 'must be at most 1000'),
};

const createSchema = z.object({ name, modelId: z.string(), ...nullishShape(fields) });
const updateSchema = z.object(nullishShape({ name, modelId: z.string(), ...fields }));

async function requireModel(db: Db, modelId: string): Promise<void> {
  const [found] = isUuid(modelId) ? await models.findModelsByIds(db, [modelId]) : [];
  if (!found) throw new NotFoundError('Model', modelId);
}

async function requireSkills(db: Db, skillIds: readonly string[]): Promise<void> {
  const valid = skillIds.filter(isUuid);
  const found = new Set((await skills.findSkillsByIds(db, valid)).map((row) => row.id));
  const missing = skillIds.find((id) => !found.has(id));
  if (missing !== undefined) throw new NotFoundError('Skill', missing);
}

export async function createConfiguration(db: Db, input: unknown): Promise<ConfigurationRow> {
  const data = parseInput(createSchema, input);
  await requireModel(db, data.modelId);
  const skillIds = data.skillIds ?? [];
  await requireSkills(db, skillIds);
  return uniquely(`A configuration named "${data.name}" already exists.`, () =>
    configurations.insertConfiguration(
      db,
      {
        id: randomUUID(),
        name: data.name,
        model_id: data.modelId,
        system_prompt: data.systemPrompt ?? '',
        temperature: data.temperature ?? null,
        max_tokens: data.maxTokens ?? null,
        max_iterations: data.maxIterations ?? DEFAULT_MAX_ITERATIONS,
        allowed_tool_groups: JSON.stringify(data.allowedToolGroups ?? []),
        trust_floor: data.trustFloor ?? 0,
        privacy_level: data.privacyLevel ?? 'METADATA',
        quarantine_tool_output: data.quarantineToolOutput ?? false,
        truncation: data.truncation ?? DEFAULT_TRUNCATION,
        require_second_approver: data.requireSecondApprover ?? false,
        max_remote_tool_calls: data.maxRemoteToolCalls ?? DEFAULT_MAX_REMOTE_TOOL_CALLS,
      },
      skillIds,
    ),
  );
}

export async function updateConfiguration(db: Db, id: string, input: Record<string, unknown>): Promise<ConfigurationRow> {
  requireId('Configuration', id);
  const data = parseInput(updateSchema, input);
  const changes: ConfigurationUpdate = {};
  if (data.name != null) changes.name = data.name;
  if (data.modelId != null) {
    await requireModel(db, data.modelId);
    changes.model_id = data.modelId;
  }
  if (data.systemPrompt != null) changes.system_prompt = data.systemPrompt;
  if ('temperature' in input && input.temperature !== undefined) changes.temperature = data.temperature ?? null;
  if ('maxTokens' in input && input.maxTokens !== undefined) changes.max_tokens = data.maxTokens ?? null;
  if (data.maxIterations != null) changes.max_iterations = data.maxIterations;
  if (data.allowedToolGroups != null) changes.allowed_tool_groups = JSON.stringify(data.allowedToolGroups);
  if (data.trustFloor != null) changes.trust_floor = data.trustFloor;
  if (data.privacyLevel != null) changes.privacy_level = data.privacyLevel;
  if (data.quarantineToolOutput != null) changes.quarantine_tool_output = data.quarantineToolOutput;
  if (data.truncation != null) changes.truncation = data.truncation;
  if (data.requireSecondApprover != null) changes.require_second_approver = data.requireSecondApprover;
  if (data.maxRemoteToolCalls != null) changes.max_remote_tool_calls = data.maxRemoteToolCalls;
  const skillIds = data.skillIds ?? undefined;
  if (skillIds) await requireSkills(db, skillIds);
  const row = await uniquely(`A configuration named "${data.name ?? ''}" already exists.`, () =>
    configurations.updateConfiguration(db, id, changes, skillIds),
  );
  if (!row) throw new NotFoundError('Configuration', id);
  return row;
}

export async function deleteConfiguration(db: Db, id: string): Promise<string> {
  requireId('Configuration', id);
  if (!(await configurations.deleteConfiguration(db, id))) throw new NotFoundError('Configuration', id);
  return id;
}

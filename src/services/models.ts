import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db, ModelRow, ModelUpdate } from '../db/database.ts';
import * as models from '../db/repositories/models.ts';
import * as providers from '../db/repositories/providers.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { isUuid, nullishShape, parseInput, requireId, uniquely } from './validate.ts';

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const providerModelId = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
/** Prices are in currency units per million tokens. */
const price = z.number().finite('must be a finite number').min(0, 'must not be negative').max(1_000_000, 'must be at most 1000000');
const maxTokens = z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000');

const optional = { inputPricePerMTok: price, outputPricePerMTok: price, maxTokens };
const createSchema = z.object({ providerId: z.string(), name, providerModelId, ...nullishShape(optional) });
const updateSchema = z.object(nullishShape({ providerId: z.string(), name, providerModelId, ...optional }));

async function requireProvider(db: Db, providerId: string): Promise<void> {
  const [found] = isUuid(providerId) ? await providers.findProvidersByIds(db, [providerId]) : [];
  if (!found) throw new NotFoundError('Provider', providerId);
}

export async function createModel(db: Db, input: unknown): Promise<ModelRow> {
  const data = parseInput(createSchema, input);
  await requireProvider(db, data.providerId);
  return uniquely(`A model named "${data.name}" already exists.`, () =>
    models.insertModel(db, {
      id: randomUUID(),
      provider_id: data.providerId,
      name: data.name,
      provider_model_id: data.providerModelId,
      input_price_per_mtok: data.inputPricePerMTok ?? 0,
      output_price_per_mtok: data.outputPricePerMTok ?? 0,
      max_tokens: data.maxTokens ?? null,
    }),
  );
}

export async function updateModel(db: Db, id: string, input: Record<string, unknown>): Promise<ModelRow> {
  requireId('Model', id);
  const data = parseInput(updateSchema, input);
  const changes: ModelUpdate = {};
  if (data.providerId != null) {
    await requireProvider(db, data.providerId);
    changes.provider_id = data.providerId;
  }
  if (data.name != null) changes.name = data.name;
  if (data.providerModelId != null) changes.provider_model_id = data.providerModelId;
  if (data.inputPricePerMTok != null) changes.input_price_per_mtok = data.inputPricePerMTok;
  if (data.outputPricePerMTok != null) changes.output_price_per_mtok = data.outputPricePerMTok;
  if ('maxTokens' in input && input.maxTokens !== undefined) changes.max_tokens = data.maxTokens ?? null;
  const row = await uniquely(`A model named "${data.name ?? ''}" already exists.`, () => models.updateModel(db, id, changes));
  if (!row) throw new NotFoundError('Model', id);
  return row;
}

export async function deleteModel(db: Db, id: string): Promise<string> {
  requireId('Model', id);
  const used = await models.countConfigurationsOfModel(db, id);
  if (used > 0) throw new ConflictError(`The model is used by ${used} configuration(s); change or delete them first.`);
  if (!(await models.deleteModel(db, id))) throw new NotFoundError('Model', id);
  return id;
}

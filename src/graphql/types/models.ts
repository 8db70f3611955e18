import { decodeIdFor, encodeGlobalId } from '../../global-id.ts';
import type { ModelRow } from '../../db/database.ts';
import { findModelsByIds, listModels, listModelsOfProvider } from '../../db/repositories/models.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import * as models from '../../services/models.ts';
import { builder } from '../builder.ts';
import { DeletedRef } from './root.ts';
import { ProviderRef } from './providers.ts';

export const ModelRef = builder.loadableNodeRef<ModelRow, string, string>('Model', {
  id: { resolve: (model) => model.id },
  load: (ids: string[], context) => findModelsByIds(context.db, ids),
  sort: (model) => model.id,
});

ModelRef.implement({
  description: 'A priced model of a provider. Prices are per million tokens.',
  fields: (t) => ({
    name: t.exposeString('name'),
    providerModelId: t.exposeString('provider_model_id', { description: 'The model id the vendor expects.' }),
    inputPricePerMTok: t.exposeFloat('input_price_per_mtok'),
    outputPricePerMTok: t.exposeFloat('output_price_per_mtok'),
    maxTokens: t.exposeInt('max_tokens', { nullable: true }),
    provider: t.field({
      type: ProviderRef,
      nullable: true,
      description: 'Admins only; null for other users.',
      resolve: (model, _args, context) => (context.viewer?.isAdmin ? model.provider_id : null),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (model) => model.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (model) => model.updated_at }),
  }),
});

// A provider's models, defined here so that the provider's file needs nothing of this one (the
// two types would otherwise import each other).
builder.objectField(ProviderRef, 'models', (t) =>
  t.field({
    type: [ModelRef],
    resolve: (provider, _args, context) => listModelsOfProvider(context.db, provider.id),
  }),
);

const CreateModelInput = builder.inputType('CreateModelInput', {
  fields: (t) => ({
    providerId: t.id({ required: true }),
    name: t.string({ required: true }),
    providerModelId: t.string({ required: true }),
    inputPricePerMTok: t.float(),
    outputPricePerMTok: t.float(),
    maxTokens: t.int(),
  }),
});

const UpdateModelInput = builder.inputType('UpdateModelInput', {
  fields: (t) => ({
    providerId: t.id(),
    name: t.string(),
    providerModelId: t.string(),
    inputPricePerMTok: t.float(),
    outputPricePerMTok: t.float(),
    maxTokens: t.int({ description: 'Explicit null removes the cap.' }),
  }),
});

builder.queryFields((t) => ({
  models: t.field({ type: [ModelRef], resolve: (_root, _args, context) => listModels(context.db) }),
}));

builder.mutationFields((t) => ({
  createModel: t.field({
    type: ModelRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { input: t.arg({ type: CreateModelInput, required: true }) },
    resolve: (_root, { input }, context) =>
      models.createModel(context.db, { ...input, providerId: decodeIdFor('Provider', input.providerId) }),
  }),
  updateModel: t.field({
    type: ModelRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { id: t.arg.globalID({ required: true, for: [ModelRef] }), input: t.arg({ type: UpdateModelInput, required: true }) },
    resolve: (_root, { id, input }, context) =>
      models.updateModel(context.db, id.id, {
        ...input,
        ...(input.providerId != null ? { providerId: decodeIdFor('Provider', input.providerId) } : {}),
      }),
  }),
  deleteModel: t.field({
    type: DeletedRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError, ConflictError] },
    args: { id: t.arg.globalID({ required: true, for: [ModelRef] }) },
    resolve: async (_root, { id }, context) => ({ id: encodeGlobalId('Model', await models.deleteModel(context.db, id.id)) }),
  }),
}));

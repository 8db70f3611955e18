import { encodeGlobalId } from '../../global-id.ts';
import type { ProviderRow } from '../../db/database.ts';
import { PROVIDER_KINDS } from '../../db/database.ts';
import { findProvidersByIds, listProviders } from '../../db/repositories/providers.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import * as providers from '../../services/providers.ts';
import type { Context } from '../../context.ts';
import { builder } from '../builder.ts';
import { DeletedRef } from './root.ts';

export const ProviderKindEnum = builder.enumType('ProviderKind', { values: PROVIDER_KINDS });

/** Providers are admin-only: their base URLs and settings describe the operator's infrastructure. */
export const ProviderRef = builder.loadableNode('Provider', {
  id: { resolve: (provider: ProviderRow) => provider.id },
  load: (ids: string[], context) => findProvidersByIds(context.db, ids),
  sort: (provider) => provider.id,
  authScopes: { admin: true },
  fields: (t) => ({
    name: t.exposeString('name'),
    kind: t.field({ type: ProviderKindEnum, resolve: (provider) => provider.kind }),
    baseUrl: t.exposeString('base_url', { nullable: true, description: 'null = the vendor default.' }),
    hasApiKey: t.boolean({
      description: 'Whether an API key is stored. The key itself is write-only and never readable.',
      resolve: (provider) => provider.api_key_ciphertext !== null,
    }),
    settings: t.field({
      type: 'JSON',
      description: 'Adapter settings as stored, without `headers`: their values are write-only (see `headerNames`).',
      resolve: (provider) => provider.settings,
    }),
    headerNames: t.stringList({
      description: 'Names of the extra request headers set in `settings.headers`. Their values are sealed and never readable.',
      resolve: (provider, _args, context) => providers.headerNames(context.secrets, provider),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (provider) => provider.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (provider) => provider.updated_at }),
  }),
});

const CreateProviderInput = builder.inputType('CreateProviderInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    kind: t.field({ type: ProviderKindEnum, required: true }),
    baseUrl: t.string({ description: 'http(s) URL without credentials; null = the vendor default.' }),
    apiKey: t.string({ description: 'Write-only; stored encrypted (AES-256-GCM).' }),
    settings: t.field({
      type: 'JSON',
      description: 'Adapter settings (a JSON object). `headers` values are sealed like the API key and only their names are shown again.',
    }),
  }),
});

const UpdateProviderInput = builder.inputType('UpdateProviderInput', {
  fields: (t) => ({
    name: t.string(),
    kind: t.field({ type: ProviderKindEnum }),
    baseUrl: t.string({ description: 'Explicit null resets to the vendor default; absent leaves it.' }),
    apiKey: t.string({ description: 'Write-only. Explicit null removes the stored key; absent leaves it.' }),
    settings: t.field({
      type: 'JSON',
      description: 'Replaces the stored settings; the sealed headers are replaced only when `headers` is given (`{}` removes them).',
    }),
  }),
});

const deps = (context: Context) => ({
  db: context.db,
  secrets: context.secrets,
  onSecret: (value: string) => context.scrubber.add(value),
});

builder.queryFields((t) => ({
  providers: t.field({
    type: [ProviderRef],
    authScopes: { admin: true },
    resolve: (_root, _args, context) => listProviders(context.db),
  }),
}));

builder.mutationFields((t) => ({
  createProvider: t.field({
    type: ProviderRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, ConflictError] },
    args: { input: t.arg({ type: CreateProviderInput, required: true }) },
    resolve: (_root, { input }, context) => providers.createProvider(deps(context), input),
  }),
  updateProvider: t.field({
    type: ProviderRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: {
      id: t.arg.globalID({ required: true, for: [ProviderRef] }),
      input: t.arg({ type: UpdateProviderInput, required: true }),
    },
    resolve: (_root, { id, input }, context) => providers.updateProvider(deps(context), id.id, input),
  }),
  deleteProvider: t.field({
    type: DeletedRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError, ConflictError] },
    args: { id: t.arg.globalID({ required: true, for: [ProviderRef] }) },
    resolve: async (_root, { id }, context) => ({
      id: encodeGlobalId('Provider', await providers.deleteProvider(context.db, id.id)),
    }),
  }),
}));

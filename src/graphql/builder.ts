import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { GraphQLError } from 'graphql';
import type { Context } from '../context.ts';
import { relayGlobalIds } from './ids.ts';
import { authenticationRequired } from './plugins/require-viewer.ts';

/**
 * The schema builder. It defines no types: every type lives in `types/<feature>.ts`.
 * Every root field needs a user (`user` scope on the root types); admin fields add `admin`.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: { user: boolean; admin: boolean };
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
    /** A calendar day, `YYYY-MM-DD`. */
    Date: { Input: Date; Output: Date | string };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  // Relay first so auth scopes see decoded global ids; scope-auth before every resolver wrapper.
  plugins: [RelayPlugin, ScopeAuthPlugin, ErrorsPlugin, SimpleObjectsPlugin, DataloaderPlugin],
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    ...relayGlobalIds,
  },
  scopeAuth: {
    authScopes: (context) => ({
      user: context.viewer !== null,
      admin: context.viewer?.isAdmin === true,
    }),
    authorizeOnSubscribe: true,
    unauthorizedError: (_parent, context) =>
      context.viewer === null
        ? authenticationRequired()
        : new GraphQLError('Forbidden: this field needs an admin.', { extensions: { code: 'FORBIDDEN' } }),
  },
  errors: {
    directResult: true,
  },
});

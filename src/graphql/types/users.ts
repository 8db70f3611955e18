import { encodeGlobalID } from '@pothos/plugin-relay';
import type { TableGrantRow, UserRow } from '../../db/database.ts';
import { GRANT_MODES } from '../../db/database.ts';
import { listGrantsOfUsers } from '../../db/repositories/grants.ts';
import { findUsersByIds, listUsers } from '../../db/repositories/users.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { createUser, grantTable, revokeTable } from '../../services/users.ts';
import { builder } from '../builder.ts';

export const GrantModeEnum = builder.enumType('GrantMode', { values: GRANT_MODES });

const TableGrantRef = builder.objectRef<TableGrantRow>('TableGrant').implement({
  fields: (t) => ({
    table: t.exposeString('table_name'),
    mode: t.field({ type: GrantModeEnum, resolve: (grant) => grant.mode }),
    createdAt: t.field({ type: 'DateTime', resolve: (grant) => grant.created_at }),
  }),
});

export const UserRef = builder.loadableNode('User', {
  id: { resolve: (user: UserRow) => user.id },
  load: (ids: string[], context) => findUsersByIds(context.services.db, ids),
  sort: (user) => user.id,
  // Admins see everyone; a user sees only themselves.
  authScopes: (user, context) => (context.viewer?.id === user.id ? true : { admin: true }),
  fields: (t) => ({
    name: t.exposeString('name'),
    isAdmin: t.exposeBoolean('is_admin'),
    createdAt: t.field({ type: 'DateTime', resolve: (user) => user.created_at }),
    tableGrants: t.field({
      type: [TableGrantRef],
      description: 'Tables of the records schema this user may read (or write) through tools.',
      resolve: (user, _args, context) => listGrantsOfUsers(context.services.db, [user.id]),
    }),
  }),
});

const CreateUserPayload = builder.simpleObject('CreateUserPayload', {
  fields: (t) => ({
    user: t.field({ type: UserRef }),
    token: t.string({ description: 'The bearer token, shown this once; only its digest is stored.' }),
  }),
});

const CreateUserInput = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    isAdmin: t.boolean({ defaultValue: false }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: UserRef,
    nullable: true,
    description: 'The authenticated user.',
    resolve: (_root, _args, context) => context.viewer?.id ?? null,
  }),
  users: t.field({
    type: [UserRef],
    authScopes: { admin: true },
    resolve: (_root, _args, context) => listUsers(context.services.db),
  }),
}));

builder.mutationFields((t) => ({
  createUser: t.field({
    type: CreateUserPayload,
    authScopes: { admin: true },
    errors: { types: [ValidationError, ConflictError] },
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: (_root, { input }, context) => createUser(context.services.db, input),
  }),
  grantTable: t.field({
    type: UserRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: {
      userId: t.arg.globalID({ required: true, for: [UserRef] }),
      table: t.arg.string({ required: true }),
      mode: t.arg({ type: GrantModeEnum, defaultValue: 'READ' }),
    },
    resolve: (_root, args, context) => grantTable(context.services.db, args.userId.id, { table: args.table, mode: args.mode }),
  }),
  revokeTable: t.field({
    type: UserRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: {
      userId: t.arg.globalID({ required: true, for: [UserRef] }),
      table: t.arg.string({ required: true }),
    },
    resolve: (_root, args, context) => revokeTable(context.services.db, args.userId.id, { table: args.table }),
  }),
}));

export const userGlobalId = (id: string) => encodeGlobalID('User', id);

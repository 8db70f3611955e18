import { encodeGlobalId } from '../../global-id.ts';
import type { TableGrantRow, UserRow } from '../../db/database.ts';
import { GRANT_MODES } from '../../db/database.ts';
import { listGrantsOfUsers } from '../../db/repositories/grants.ts';
import { findUsersByIds, listUsers, USER_RUNS_ON_DELETE, type UserRemoval } from '../../db/repositories/users.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { createUser, deleteUser, grantTable, revokeTable, rotateToken, setAdmin, setUserActive } from '../../services/users.ts';
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
  load: (ids: string[], context) => findUsersByIds(context.db, ids),
  sort: (user) => user.id,
  // Admins see everyone; a user sees only themselves.
  authScopes: (user, context) => (context.viewer?.id === user.id ? true : { admin: true }),
  fields: (t) => ({
    name: t.exposeString('name'),
    isAdmin: t.exposeBoolean('is_admin'),
    active: t.exposeBoolean('active', { description: "False once deactivated: the user's token is refused until setUserActive(active: true)." }),
    createdAt: t.field({ type: 'DateTime', resolve: (user) => user.created_at }),
    tokenRotatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When rotateToken last replaced the token; null if never.',
      resolve: (user) => user.token_rotated_at,
    }),
    tableGrants: t.field({
      type: [TableGrantRef],
      description: 'Tables of the records schema this user may read (or write) through tools.',
      resolve: (user, _args, context) => listGrantsOfUsers(context.db, [user.id]),
    }),
  }),
});

const CreateUserPayload = builder.simpleObject('CreateUserPayload', {
  fields: (t) => ({
    user: t.field({ type: UserRef }),
    token: t.string({ description: 'The bearer token, shown this once; only its digest is stored.' }),
  }),
});

const DeleteUserRunsEnum = builder.enumType('DeleteUserRuns', {
  description: "What deleteUser does with the user's runs.",
  values: {
    REFUSE: { description: 'Refuse while the user owns runs (the default).' },
    REASSIGN: { description: 'Give the runs to the user named by reassignTo.' },
    PURGE: { description: 'Delete the runs and their steps; their usage records stay counted, attributed to no user and no run.' },
  } satisfies Record<(typeof USER_RUNS_ON_DELETE)[number], unknown>,
});

const DeleteUserPayload = builder.objectRef<UserRemoval>('DeleteUserPayload').implement({
  fields: (t) => ({
    id: t.id({ description: 'Global id of the deleted user.', resolve: (removal) => userGlobalId(removal.user.id) }),
    reassignedRuns: t.exposeInt('reassignedRuns'),
    purgedRuns: t.exposeInt('purgedRuns'),
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
    resolve: (_root, _args, context) => listUsers(context.db),
  }),
}));

builder.mutationFields((t) => ({
  createUser: t.field({
    type: CreateUserPayload,
    authScopes: { admin: true },
    errors: { types: [ValidationError, ConflictError] },
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: (_root, { input }, context) => createUser(context.db, input),
  }),
  rotateToken: t.field({
    type: CreateUserPayload,
    description: "Replaces a user's token with a new one, shown this once: the old token is refused from now on and the user's open sessions end.",
    authScopes: { admin: true },
    errors: { types: [NotFoundError] },
    args: { userId: t.arg.globalID({ required: true, for: [UserRef] }) },
    resolve: (_root, { userId }, context) => rotateToken(context, userId.id),
  }),
  setUserActive: t.field({
    type: UserRef,
    description: "Deactivating refuses the user's token at once, ends their open sessions (websockets close with 4403) and cancels their runs. The last active admin stays active.",
    authScopes: { admin: true },
    errors: { types: [NotFoundError, ConflictError] },
    args: { userId: t.arg.globalID({ required: true, for: [UserRef] }), active: t.arg.boolean({ required: true }) },
    resolve: (_root, { userId, active }, context) => setUserActive(context, userId.id, active),
  }),
  setAdmin: t.field({
    type: UserRef,
    description: 'Makes a user admin or not. The last active admin cannot be demoted; a demoted user\'s open sessions end.',
    authScopes: { admin: true },
    errors: { types: [NotFoundError, ConflictError] },
    args: { userId: t.arg.globalID({ required: true, for: [UserRef] }), isAdmin: t.arg.boolean({ required: true }) },
    resolve: (_root, { userId, isAdmin }, context) => setAdmin(context, userId.id, isAdmin),
  }),
  deleteUser: t.field({
    type: DeleteUserPayload,
    description:
      'Deletes a user. Refused while they own runs unless runs is REASSIGN (with reassignTo) or PURGE, while any of their runs is in progress, and for the last active admin.',
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: {
      userId: t.arg.globalID({ required: true, for: [UserRef] }),
      runs: t.arg({ type: DeleteUserRunsEnum, defaultValue: 'REFUSE' }),
      reassignTo: t.arg.globalID({ for: [UserRef], description: 'The user who keeps the runs, with runs: REASSIGN.' }),
    },
    resolve: (_root, { userId, runs, reassignTo }, context) =>
      deleteUser(context, userId.id, { runs, reassignTo: reassignTo?.id ?? null }),
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
    resolve: (_root, args, context) => grantTable(context.db, args.userId.id, { table: args.table, mode: args.mode }),
  }),
  revokeTable: t.field({
    type: UserRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: {
      userId: t.arg.globalID({ required: true, for: [UserRef] }),
      table: t.arg.string({ required: true }),
    },
    resolve: (_root, args, context) => revokeTable(context.db, args.userId.id, { table: args.table }),
  }),
}));

export const userGlobalId = (id: string) => encodeGlobalId('User', id);

import { encodeGlobalId } from '../../global-id.ts';
import type { SkillRow } from '../../db/database.ts';
import { findSkillsByIds, listSkills } from '../../db/repositories/skills.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import * as skills from '../../services/skills.ts';
import { builder } from '../builder.ts';
import { DeletedRef } from './root.ts';

export const SkillRef = builder.loadableNode('Skill', {
  id: { resolve: (skill: SkillRow) => skill.id },
  load: (ids: string[], context) => findSkillsByIds(context.db, ids),
  sort: (skill) => skill.id,
  description: 'A prompt fragment a configuration can attach; it may declare the tools it needs.',
  fields: (t) => ({
    name: t.exposeString('name'),
    body: t.exposeString('body'),
    allowedTools: t.stringList({
      nullable: true,
      description: 'null = no opinion about tools; [] = allows no tools.',
      resolve: (skill) => skill.allowed_tools,
    }),
    trustLevel: t.exposeInt('trust_level'),
    enabled: t.exposeBoolean('enabled'),
    createdAt: t.field({ type: 'DateTime', resolve: (skill) => skill.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (skill) => skill.updated_at }),
  }),
});

const CreateSkillInput = builder.inputType('CreateSkillInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    body: t.string({ required: true }),
    allowedTools: t.stringList({ description: 'null = no opinion; [] = no tools.' }),
    trustLevel: t.int({ description: '0..100; a configuration ignores skills below its trust floor.' }),
    enabled: t.boolean(),
  }),
});

const UpdateSkillInput = builder.inputType('UpdateSkillInput', {
  fields: (t) => ({
    name: t.string(),
    body: t.string(),
    allowedTools: t.stringList({ description: 'Explicit null = no opinion; absent leaves it.' }),
    trustLevel: t.int(),
    enabled: t.boolean(),
  }),
});

builder.queryFields((t) => ({
  skills: t.field({ type: [SkillRef], resolve: (_root, _args, context) => listSkills(context.db) }),
}));

builder.mutationFields((t) => ({
  createSkill: t.field({
    type: SkillRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, ConflictError] },
    args: { input: t.arg({ type: CreateSkillInput, required: true }) },
    resolve: (_root, { input }, context) => skills.createSkill(context.db, input),
  }),
  updateSkill: t.field({
    type: SkillRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { id: t.arg.globalID({ required: true, for: [SkillRef] }), input: t.arg({ type: UpdateSkillInput, required: true }) },
    resolve: (_root, { id, input }, context) => skills.updateSkill(context.db, id.id, input),
  }),
  deleteSkill: t.field({
    type: DeletedRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError] },
    args: { id: t.arg.globalID({ required: true, for: [SkillRef] }) },
    resolve: async (_root, { id }, context) => ({ id: encodeGlobalId('Skill', await skills.deleteSkill(context.db, id.id)) }),
  }),
}));

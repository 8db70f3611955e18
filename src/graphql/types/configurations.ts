import { decodeIdFor, encodeGlobalId } from '../../global-id.ts';
import type { ConfigurationRow } from '../../db/database.ts';
import { PRIVACY_LEVELS } from '../../runtime/privacy.ts';
import { MIDDLE_TRUNCATION_MARKER, TRUNCATION_MARKER, TRUNCATION_MODES } from '../../tools/bounds.ts';
import { findConfigurationsByIds, findSkillIdsOfConfigurations, listConfigurations } from '../../db/repositories/configurations.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import * as configurations from '../../services/configurations.ts';
import { DENIAL_REASONS } from '../../access/gate.ts';
import { findUserById } from '../../db/repositories/users.ts';
import { explainConfiguration } from '../../services/tool-access.ts';
import { toActor } from '../../services/users.ts';
import { isUuid } from '../../services/validate.ts';
import { builder } from '../builder.ts';
import { ModelRef } from './models.ts';
import { DeletedRef } from './root.ts';
import { SkillRef } from './skills.ts';
import { UserRef } from './users.ts';

export const PrivacyLevelEnum = builder.enumType('PrivacyLevel', {
  values: PRIVACY_LEVELS,
  description: 'How much of a run is persisted: NONE/METADATA keep no content, REDACTED masks secrets, FULL is verbatim.',
});

export const TruncationModeEnum = builder.enumType('TruncationMode', {
  values: TRUNCATION_MODES,
  description: `How tool content over the 50 000-byte cap is cut before the model sees it: HEAD keeps the start and ends with ${JSON.stringify(TRUNCATION_MARKER)}; MIDDLE keeps the start and the end with ${JSON.stringify(MIDDLE_TRUNCATION_MARKER)} between them. Never splits a character; a quarantine envelope stays whole.`,
});

export const ToolDenialReasonEnum = builder.enumType('ToolDenialReason', {
  description: 'The FIRST rule that refuses a tool, in the order the gate checks them.',
  values: Object.fromEntries(
    DENIAL_REASONS.map((reason) => [reason.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase(), { value: reason }]),
  ),
});

const ToolDecisionRef = builder.simpleObject('ToolDecision', {
  description: 'Whether a registered tool is offered by a configuration to a user, and if not, why.',
  fields: (t) => ({
    toolName: t.string(),
    group: t.string(),
    offered: t.boolean(),
    reason: t.field({ type: ToolDenialReasonEnum, nullable: true, description: 'null exactly when offered.' }),
  }),
});

/** Any authenticated user may read and run a configuration; only admins change them. */
export const ConfigurationRef = builder.loadableNode('Configuration', {
  id: { resolve: (configuration: ConfigurationRow) => configuration.id },
  load: (ids: string[], context) => findConfigurationsByIds(context.db, ids),
  sort: (configuration) => configuration.id,
  fields: (t) => ({
    name: t.exposeString('name'),
    model: t.field({ type: ModelRef, resolve: (configuration) => configuration.model_id }),
    systemPrompt: t.exposeString('system_prompt'),
    temperature: t.exposeFloat('temperature', { nullable: true }),
    maxTokens: t.exposeInt('max_tokens', { nullable: true }),
    maxIterations: t.exposeInt('max_iterations', { description: 'Tool rounds before a final answer is forced.' }),
    allowedToolGroups: t.stringList({
      description:
        'Tool groups this configuration may offer. Empty (`[]`, also what an omitted list reads back as) = no group restriction: every enabled tool the running user may use, which for an admin includes the system and accounts tools (get_env, fetch_logs, list_users, …). Name groups to narrow it.',
      resolve: (configuration) => configuration.allowed_tool_groups,
    }),
    skills: t.field({
      type: [SkillRef],
      resolve: async (configuration, _args, context) =>
        (await findSkillIdsOfConfigurations(context.db, [configuration.id])).get(configuration.id) ?? [],
    }),
    trustFloor: t.exposeInt('trust_floor'),
    privacyLevel: t.field({
      type: PrivacyLevelEnum,
      description:
        'What of each run is STORED (and shown live to non-admins). Default METADATA stores no content: prompt, finalContent and every step content field read back null, even for an admin; choose REDACTED or FULL to read content back.',
      resolve: (configuration) => configuration.privacy_level,
    }),
    quarantineToolOutput: t.exposeBoolean('quarantine_tool_output'),
    truncation: t.field({
      type: TruncationModeEnum,
      description: 'How tool content over the byte cap is cut for the model (and in the stored TOOL step).',
      resolve: (configuration) => configuration.truncation,
    }),
    requireSecondApprover: t.exposeBoolean('require_second_approver', {
      description: "Four eyes: the run's initiator may deny but not approve their own run's writes.",
    }),
    maxRemoteToolCalls: t.exposeInt('max_remote_tool_calls', {
      description: 'Calls of remote (MCP-imported) tools one run may make; later calls are refused.',
    }),
    toolDecisions: t.field({
      type: [ToolDecisionRef],
      authScopes: { admin: true },
      description: 'For admins: why each registered tool is or is not offered, as the viewer or as `asUser`.',
      args: { asUser: t.arg.globalID({ for: [UserRef] }) },
      resolve: async (configuration, { asUser }, context) => {
        const { db, registry } = context;
        let actor = context.viewer;
        if (asUser) {
          const row = isUuid(asUser.id) ? await findUserById(db, asUser.id) : undefined;
          if (!row) throw new NotFoundError('User', asUser.id);
          actor = toActor(row);
        }
        return explainConfiguration(db, registry, configuration, actor);
      },
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (configuration) => configuration.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (configuration) => configuration.updated_at }),
  }),
});

const CreateConfigurationInput = builder.inputType('CreateConfigurationInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    modelId: t.id({ required: true }),
    systemPrompt: t.string(),
    temperature: t.float(),
    maxTokens: t.int(),
    maxIterations: t.int({ description: 'Default 5.' }),
    allowedToolGroups: t.stringList({
      description:
        'Omitted or empty = every enabled tool the running user may use (for an admin that includes system tools such as get_env, fetch_logs, list_users); reads back as `[]`. Name groups (e.g. ["content", "structure"]) to narrow it.',
    }),
    skillIds: t.idList(),
    trustFloor: t.int(),
    privacyLevel: t.field({
      type: PrivacyLevelEnum,
      description:
        'Default METADATA, which stores no content: every content field of the stored run reads null, even for an admin. REDACTED or FULL keep content to read back.',
    }),
    quarantineToolOutput: t.boolean(),
    truncation: t.field({ type: TruncationModeEnum, description: 'Default HEAD.' }),
    requireSecondApprover: t.boolean({ description: 'Default false.' }),
    maxRemoteToolCalls: t.int({ description: 'Calls of remote (MCP-imported) tools per run, 0 to 1000. Default 20.' }),
  }),
});

const UpdateConfigurationInput = builder.inputType('UpdateConfigurationInput', {
  fields: (t) => ({
    name: t.string(),
    modelId: t.id(),
    systemPrompt: t.string(),
    temperature: t.float({ description: 'Explicit null = the provider default.' }),
    maxTokens: t.int({ description: 'Explicit null = no cap.' }),
    maxIterations: t.int(),
    allowedToolGroups: t.stringList({
      description: 'Replaces the list; `[]` = every enabled tool the running user may use (for an admin, system tools too).',
    }),
    skillIds: t.idList({ description: 'Replaces the attached skills, in this order.' }),
    trustFloor: t.int(),
    privacyLevel: t.field({
      type: PrivacyLevelEnum,
      description: 'Applies to runs started afterwards. NONE/METADATA store no content (content fields read null, even for an admin).',
    }),
    quarantineToolOutput: t.boolean(),
    truncation: t.field({ type: TruncationModeEnum, description: 'Applies to runs started afterwards.' }),
    requireSecondApprover: t.boolean(),
    maxRemoteToolCalls: t.int(),
  }),
});

function decodeReferences<T extends { modelId?: string | number | null; skillIds?: readonly (string | number)[] | null }>(input: T) {
  return {
    ...input,
    ...(input.modelId != null ? { modelId: decodeIdFor('Model', input.modelId) } : {}),
    ...(input.skillIds != null ? { skillIds: input.skillIds.map((id) => decodeIdFor('Skill', id)) } : {}),
  };
}

builder.queryFields((t) => ({
  configurations: t.field({
    type: [ConfigurationRef],
    resolve: (_root, _args, context) => listConfigurations(context.db),
  }),
  configuration: t.field({
    type: ConfigurationRef,
    nullable: true,
    args: { id: t.arg.globalID({ required: true, for: [ConfigurationRef] }) },
    resolve: (_root, { id }) => id.id,
  }),
}));

builder.mutationFields((t) => ({
  createConfiguration: t.field({
    type: ConfigurationRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { input: t.arg({ type: CreateConfigurationInput, required: true }) },
    resolve: (_root, { input }, context) => configurations.createConfiguration(context.db, decodeReferences(input)),
  }),
  updateConfiguration: t.field({
    type: ConfigurationRef,
    authScopes: { admin: true },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: {
      id: t.arg.globalID({ required: true, for: [ConfigurationRef] }),
      input: t.arg({ type: UpdateConfigurationInput, required: true }),
    },
    resolve: (_root, { id, input }, context) =>
      configurations.updateConfiguration(context.db, id.id, decodeReferences(input)),
  }),
  deleteConfiguration: t.field({
    type: DeletedRef,
    authScopes: { admin: true },
    errors: { types: [NotFoundError] },
    args: { id: t.arg.globalID({ required: true, for: [ConfigurationRef] }) },
    resolve: async (_root, { id }, context) => ({
      id: encodeGlobalId('Configuration', await configurations.deleteConfiguration(context.db, id.id)),
    }),
  }),
}));

import { z } from 'zod';
import type { ToolData } from '../data.ts';
import { ToolResult, tableArtifact } from '../result.ts';
import type { Tool } from '../tool.ts';
import { actingUser } from './actor-guard.ts';

const parameters = z.strictObject({});

type Args = z.output<typeof parameters>;

/** How a configuration without a group restriction reads. */
const ANY_GROUP = 'any enabled';

export const listConfigurationsTool: Tool<Args, ToolData> = {
  name: 'list_configurations',
  description: 'List the agent configurations: each one\'s name, model, provider kind and allowed tool groups.',
  group: 'configuration',
  parameters,
  enabledByDefault: true,
  requiresAdmin: false,
  effect: 'read',
  async execute(_args, ctx) {
    const actor = actingUser(ctx);
    if (actor instanceof ToolResult) return actor;

    // The data layer never reads keys, ciphertexts, provider settings or system prompts, so there
    // is nothing secret here to mask.
    const configurations = await ctx.data.configurations.list();
    if (configurations.length === 0) return ToolResult.text('No configurations exist yet.');

    const groupsOf = (groups: readonly string[]) => (groups.length === 0 ? ANY_GROUP : groups.join(', '));
    const lines = [`${configurations.length} configuration${configurations.length === 1 ? '' : 's'}:`];
    const rows: string[][] = [];
    for (const configuration of configurations) {
      const groups = groupsOf(configuration.allowedToolGroups);
      const { name, modelName, providerModelId, providerKind } = configuration;
      lines.push(`- ${name}: model ${modelName} (${providerKind} ${providerModelId}); tool groups: ${groups}`);
      rows.push([name, modelName, providerModelId, providerKind, groups]);
    }
    return ToolResult.text(
      lines.join('\n'),
      tableArtifact('Configurations', ['name', 'model', 'provider model id', 'provider kind', 'tool groups'], rows),
    );
  },
};

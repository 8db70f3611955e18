import { USAGE_DIMENSIONS, usageGroupsBound, usageSummary, type UsageGroupRow } from '../../services/usage-summary.ts';
import { builder } from '../builder.ts';
import { listSizeExtensions } from '../plugins/query-cost.ts';
import { ConfigurationRef } from './configurations.ts';
import { ModelRef } from './models.ts';
import { UserRef } from './users.ts';

const UsageGroupByEnum = builder.enumType('UsageGroupBy', {
  description: 'A field to group usage by; DAY is the UTC calendar day.',
  values: USAGE_DIMENSIONS,
});

const UsageGroupRef = builder.objectRef<UsageGroupRow>('UsageGroup').implement({
  description:
    'The usage records of one group. A subject field is null when the summary is not grouped by it, or when the user, configuration or model was deleted since (all deleted ones form one group).',
  fields: (t) => ({
    user: t.field({ type: UserRef, nullable: true, resolve: (group) => group.userId }),
    configuration: t.field({ type: ConfigurationRef, nullable: true, resolve: (group) => group.configurationId }),
    model: t.field({ type: ModelRef, nullable: true, resolve: (group) => group.modelId }),
    day: t.field({ type: 'Date', nullable: true, resolve: (group) => group.day }),
    requests: t.exposeInt('requests', { description: 'Provider calls answered (one usage record each).' }),
    // Float: sums of bigint token columns may pass 2^31; exact below 2^53.
    promptTokens: t.exposeFloat('promptTokens'),
    completionTokens: t.exposeFloat('completionTokens'),
    cost: t.exposeFloat('cost', { description: 'In the currency of the model prices.' }),
  }),
});

builder.queryFields((t) => ({
  usageSummary: t.field({
    type: [UsageGroupRef],
    description:
      'Provider calls, tokens and cost from the usage records created at or after `from` and before `to` (at most 366 days), per group of the `groupBy` fields (none: one total row). A non-admin sees their own usage; an admin everyone\'s. At most 500 groups: a summary that would hold more is refused (narrow the range or group by fewer fields). Ordered by day, then by cost, highest first.',
    extensions: listSizeExtensions(usageGroupsBound),
    args: {
      from: t.arg({ type: 'DateTime', required: true }),
      to: t.arg({ type: 'DateTime', required: true }),
      groupBy: t.arg({ type: [UsageGroupByEnum], required: true }),
    },
    resolve: (_root, args, context) => usageSummary(context.db, context.viewer!, args),
  }),
}));

import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';

/**
 * The shape limits of a document (depth, aliases, tokens, directives) and armor's own suggestion
 * filter. `exposeLimits` says the limit in the refusal (development only: production keeps its
 * bounds to itself).
 */
export function useArmor({ exposeLimits }: { readonly exposeLimits: boolean }) {
  return EnvelopArmorPlugin({
    maxDepth: { n: 10, exposeLimits, ignoreIntrospection: true },
    maxAliases: { n: 15, exposeLimits },
    maxTokens: { n: 2_000, exposeLimits },
    maxDirectives: { n: 20, exposeLimits },
    // Armor's cost ignores default page sizes and variables: useQueryCost counts instead.
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: true },
  });
}

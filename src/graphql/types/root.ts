import { builder } from '../builder.ts';

// Root types. Every root field needs an authenticated user; admin fields add the `admin` scope.
builder.queryType({ authScopes: { user: true } });
builder.mutationType({ authScopes: { user: true } });

/** Deleting returns the global id of what was deleted. */
export const DeletedRef = builder.simpleObject('Deleted', {
  fields: (t) => ({ id: t.id({ description: 'Global id of the deleted object.' }) }),
});

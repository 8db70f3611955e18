import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './scalars.ts';
import './errors.ts';
import './types/root.ts';
import './types/users.ts';
import './types/tools.ts';
import './types/providers.ts';
import './types/models.ts';
import './types/skills.ts';
import './types/configurations.ts';
import './types/demo.ts';
import './types/mcp-servers.ts';
import './types/runnable-tools.ts';
import './types/budgets.ts';
import './types/usage.ts';
import './types/artifacts.ts';
import './types/run-steps.ts';
import './types/runs.ts';
import './types/approvals.ts';
import './types/run-start.ts';
import './types/run-events.ts';
import './types/run-feeds.ts';

/** The executable schema, lexicographically sorted so the printed SDL diffs cleanly. */
export function buildSchema() {
  return lexicographicSortSchema(builder.toSchema());
}

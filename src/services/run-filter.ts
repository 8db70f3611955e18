import { z } from 'zod';
import type { RunRow } from '../db/database.ts';
import type { RunFilter } from '../db/repositories/run-list.ts';
import { RUN_KINDS, RUN_STATUSES, TERMINATION_REASONS, type TerminationReason } from '../runtime/run.ts';
import type { Actor } from '../tools/tool.ts';
import { ForbiddenError } from '../errors.ts';
import { parseInput } from './validate.ts';

/**
 * Which runs a list or a live feed shows (DESIGN.md 8b `RunFilter`; the shape is declared beside
 * its SQL in db/repositories/run-list.ts). The list (`listRuns`) and the live feeds
 * (`matchesRunFilter`) read this one shape, so a list and its feed always agree.
 */
export type { RunFilter };

export const NO_RUN_FILTER: RunFilter = Object.freeze({
  configurationId: null,
  userId: null,
  kind: null,
  status: [],
  terminationReason: [],
  createdFrom: null,
  createdTo: null,
});

const schema = z
  .object({
    configurationId: z.string().nullish(),
    userId: z.string().nullish(),
    kind: z.enum(RUN_KINDS).nullish(),
    status: z.array(z.enum(RUN_STATUSES)).max(RUN_STATUSES.length * 2, 'must list each status at most twice').nullish(),
    terminationReason: z.array(z.enum(TERMINATION_REASONS)).max(TERMINATION_REASONS.length * 2, 'must list each reason at most twice').nullish(),
    createdFrom: z.date().nullish(),
    createdTo: z.date().nullish(),
  })
  .refine((filter) => !filter.createdFrom || !filter.createdTo || filter.createdFrom < filter.createdTo, {
    message: 'must be after createdFrom',
    path: ['createdTo'],
  });

/**
 * The filter a viewer may use: a non-admin always sees their own runs only, and naming another
 * user is refused (only admins filter by user).
 */
export function runFilterFor(viewer: Actor, input: unknown): RunFilter {
  const parsed = parseInput(schema, input ?? {});
  const named = parsed.userId ?? null;
  if (!viewer.isAdmin && named !== null && named !== viewer.id) throw new ForbiddenError('Only admins may list the runs of another user.');
  return {
    configurationId: parsed.configurationId ?? null,
    userId: viewer.isAdmin ? named : viewer.id,
    kind: parsed.kind ?? null,
    status: [...new Set(parsed.status ?? [])],
    terminationReason: [...new Set(parsed.terminationReason ?? [])],
    createdFrom: parsed.createdFrom ?? null,
    createdTo: parsed.createdTo ?? null,
  };
}

/** The same test as the SQL of `runs`, on a row in memory (for the live feeds). */
export function matchesRunFilter(
  run: Pick<RunRow, 'configuration_id' | 'user_id' | 'kind' | 'status' | 'termination_reason' | 'created_at'>,
  filter: RunFilter,
): boolean {
  if (filter.configurationId !== null && run.configuration_id !== filter.configurationId) return false;
  if (filter.userId !== null && run.user_id !== filter.userId) return false;
  if (filter.kind !== null && run.kind !== filter.kind) return false;
  if (filter.status.length > 0 && !filter.status.includes(run.status)) return false;
  if (filter.terminationReason.length > 0 && (run.termination_reason === null || !filter.terminationReason.includes(run.termination_reason as TerminationReason))) return false;
  if (filter.createdFrom !== null && run.created_at < filter.createdFrom) return false;
  if (filter.createdTo !== null && run.created_at >= filter.createdTo) return false;
  return true;
}

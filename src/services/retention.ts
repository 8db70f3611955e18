import type { Db } from '../db/database.ts';
import { findRunsToPurge, listRunSteps, replaceRunContent } from '../db/repositories/runs.ts';
import { filterStep } from '../runtime/privacy.ts';
import type { StoredStep } from '../runtime/stored-step.ts';

export const RETENTION_BATCH = 100;

/**
 * Purges stored content older than `retentionDays` down to metadata: each step is re-filtered at
 * METADATA (summaries, tokens, cost and tool names stay) and the run's prompt and final answer are
 * cleared. Returns the number of runs purged. Runs still open are left alone.
 */
export async function purgeExpiredContent(db: Db, retentionDays: number, now: Date = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let purged = 0;
  for (;;) {
    const batch = await findRunsToPurge(db, cutoff, RETENTION_BATCH);
    for (const run of batch) {
      const steps = await listRunSteps(db, run.id, 0, 1_000_000);
      await replaceRunContent(
        db,
        run.id,
        steps.map((row) => ({ sequence: row.sequence, payload: filterStep(row.payload as unknown as StoredStep, 'METADATA') })),
      );
      purged += 1;
    }
    if (batch.length < RETENTION_BATCH) return purged;
  }
}

import { sql } from 'kysely';
import type { Db } from '../database.ts';

/** What the service's own monitoring asks the database: readiness (`/ready`) and the gauges of `/metrics`. */

/** One round trip to the database (readiness). Throws when it does not answer. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Runs waiting for a human decision, in the whole deployment (the approvals-waiting gauge). */
export async function countWaitingRuns(db: Db): Promise<number> {
  const { waiting } = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('waiting'))
    .where('status', '=', 'WAITING_FOR_APPROVAL')
    .executeTakeFirstOrThrow();
  return Number(waiting);
}

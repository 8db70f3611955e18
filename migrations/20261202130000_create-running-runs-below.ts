import { type Kysely, sql } from 'kysely';

// A run start checks the user's running-runs cap and inserts the run in ONE statement (issue 19):
// the statement calls this function, which takes the per-user advisory lock and counts. It must be
// a VOLATILE function: each of its queries then takes a fresh snapshot, so the count sees every
// start committed before the lock was granted (a plain subquery would count from the statement's
// own snapshot, taken before waiting for the lock). The lock is held until the statement's
// transaction ends, after its insert, so concurrent starts are counted one after the other.
// 1095912497 (0x41524c31) is the lock namespace the five-statement transaction used before.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function airlock_running_runs_below(p_user_id uuid, p_max integer) returns boolean
    language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(1095912497, hashtext(p_user_id::text));
      return (select count(*) from runs where user_id = p_user_id and status = 'RUNNING') < p_max;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function airlock_running_runs_below(uuid, integer)`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// The running-runs cap counts agent runs only: an MCP session is a RUNNING run for as long as its
// client keeps it (clients that never delete theirs filled the cap and locked their user out of
// every run for AIRLOCK_MCP_SESSION_IDLE_MS); sessions have their own cap,
// AIRLOCK_MAX_MCP_SESSIONS_PER_USER. Same lock, same VOLATILE function as 20261202130000.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function airlock_running_runs_below(p_user_id uuid, p_max integer) returns boolean
    language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(1095912497, hashtext(p_user_id::text));
      return (select count(*) from runs where user_id = p_user_id and status = 'RUNNING' and kind = 'AGENT') < p_max;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function airlock_running_runs_below(p_user_id uuid, p_max integer) returns boolean
    language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(1095912497, hashtext(p_user_id::text));
      return (select count(*) from runs where user_id = p_user_id and status = 'RUNNING') < p_max;
    end
    $$`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Durable runs (issue 27): a RUNNING agent run is owned through a lease (owner, epoch, expiry,
// renewed by the owner's heartbeat); when it lapses another process claims the run, raises the
// epoch and continues it from its sealed checkpoint (secret box, context `run:<id>:checkpoint`).
// Every step carries the epoch of the process that wrote it, and the trigger refuses a step whose
// epoch is not the run's current one, under a KEY SHARE lock on the run's row: a claim (which
// takes FOR UPDATE) waits for a step insert in flight, and an insert that comes after a claim
// re-reads the row and is refused. So a process that was only paused never writes over its
// successor. Steps without an epoch (MCP sessions, rows written before) are not checked.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_epoch', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('checkpoint', 'text')
    .addColumn('resume_count', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('run_steps').addColumn('epoch', 'integer').execute();
  await sql`
    create function airlock_step_epoch_is_current() returns trigger
    language plpgsql volatile as $$
    begin
      if new.epoch is not null then
        perform 1 from runs where id = new.run_id and lease_epoch = new.epoch and status = 'RUNNING' for key share;
        if not found then
          raise exception 'run % has moved on from lease epoch %', new.run_id, new.epoch using errcode = 'AR001';
        end if;
      end if;
      return new;
    end
    $$`.execute(db);
  await sql`create trigger run_steps_epoch_is_current before insert on run_steps for each row execute function airlock_step_epoch_is_current()`.execute(db);
  await sql`create index runs_lease_expires_idx on runs (lease_expires_at) where status = 'RUNNING'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index runs_lease_expires_idx`.execute(db);
  await sql`drop trigger run_steps_epoch_is_current on run_steps`.execute(db);
  await sql`drop function airlock_step_epoch_is_current()`.execute(db);
  await db.schema.alterTable('run_steps').dropColumn('epoch').execute();
  await db.schema
    .alterTable('runs')
    .dropColumn('lease_owner')
    .dropColumn('lease_epoch')
    .dropColumn('lease_expires_at')
    .dropColumn('checkpoint')
    .dropColumn('resume_count')
    .execute();
}

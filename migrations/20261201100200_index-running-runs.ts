import { type Kysely, sql } from 'kysely';

// The running-runs cap counts one user's RUNNING runs at every start: a partial index keeps that
// count to the few rows it is about, however many settled runs the user has.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('runs_running_user_idx')
    .on('runs')
    .column('user_id')
    .where(sql.ref('status'), '=', 'RUNNING')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('runs_running_user_idx').execute();
}

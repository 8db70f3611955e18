import { type Kysely, sql } from 'kysely';

// How a configuration cuts tool content over the byte cap: HEAD keeps the start (what every
// configuration did before), MIDDLE keeps the start and the end around a marker.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('configurations')
    .addColumn('truncation', 'text', (col) =>
      col
        .notNull()
        .defaultTo('HEAD')
        .check(sql`truncation in ('HEAD', 'MIDDLE')`),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('configurations').dropColumn('truncation').execute();
}

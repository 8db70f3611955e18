import { type Kysely, sql } from 'kysely';

// Priced models. Prices are per million tokens; `provider_model_id` is the id the vendor expects.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('models')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('provider_id', 'uuid', (col) => col.notNull().references('providers.id').onDelete('restrict'))
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('provider_model_id', 'text', (col) => col.notNull())
    .addColumn('input_price_per_mtok', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('output_price_per_mtok', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('max_tokens', 'integer')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('models_provider_id_idx').on('models').column('provider_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('models').execute();
}

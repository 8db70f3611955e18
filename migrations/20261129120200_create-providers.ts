import { type Kysely, sql } from 'kysely';

// LLM providers. The API key is stored only as AES-256-GCM ciphertext bound to the row id.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('providers')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('kind', 'text', (col) =>
      col.notNull().check(sql`kind in ('OPENAI', 'ANTHROPIC', 'OLLAMA', 'GEMINI', 'SCRIPTED')`),
    )
    .addColumn('base_url', 'text')
    .addColumn('api_key_ciphertext', 'text')
    .addColumn('settings', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('providers').execute();
}

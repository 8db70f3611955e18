import { type Kysely, sql } from 'kysely';

// Agent configurations: what a run uses. Skills are attached in order through a join table.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('configurations')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('model_id', 'uuid', (col) => col.notNull().references('models.id').onDelete('restrict'))
    .addColumn('system_prompt', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('temperature', 'double precision')
    .addColumn('max_tokens', 'integer')
    .addColumn('max_iterations', 'integer', (col) => col.notNull().defaultTo(5))
    .addColumn('allowed_tool_groups', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('trust_floor', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('privacy_level', 'text', (col) =>
      col
        .notNull()
        .defaultTo('METADATA')
        .check(sql`privacy_level in ('NONE', 'METADATA', 'REDACTED', 'FULL')`),
    )
    .addColumn('quarantine_tool_output', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('configurations_model_id_idx').on('configurations').column('model_id').execute();
  await db.schema
    .createTable('configuration_skills')
    .addColumn('configuration_id', 'uuid', (col) => col.notNull().references('configurations.id').onDelete('cascade'))
    .addColumn('skill_id', 'uuid', (col) => col.notNull().references('skills.id').onDelete('cascade'))
    .addColumn('position', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('configuration_skills_pk', ['configuration_id', 'skill_id'])
    .execute();
  await db.schema.createIndex('configuration_skills_skill_id_idx').on('configuration_skills').column('skill_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('configuration_skills').execute();
  await db.schema.dropTable('configurations').execute();
}

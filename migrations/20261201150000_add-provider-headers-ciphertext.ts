import type { Kysely } from 'kysely';

// Extra request headers of a provider (often credentials: `x-api-key`, `authorization`) are sealed
// like the API key. Plaintext headers left in `settings` by earlier versions are sealed at the next
// start (services/providers.ts `sealPlaintextHeaders`): a migration holds no master key.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('providers').addColumn('headers_ciphertext', 'text').execute();
}

// Down drops the sealed headers: after a rollback, providers that needed them must be given them again.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('providers').dropColumn('headers_ciphertext').execute();
}

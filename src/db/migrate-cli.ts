import { loadConfig } from '../config.ts';
import { createDb } from './create-db.ts';
import { DataDirLockedError } from './data-dir-lock.ts';
import { migrateToLatest } from './migrate.ts';

// `npm run db:migrate`: applies pending migrations to the configured database and exits.
const config = loadConfig();
const handle = await createDb(config).catch((error: unknown) => {
  console.error(error instanceof DataDirLockedError ? error.message : error);
  process.exit(1);
});
try {
  const applied = await migrateToLatest(handle.db);
  console.log(applied.length === 0 ? 'Database is up to date.' : `Applied ${applied.length} migration(s):\n  ${applied.join('\n  ')}`);
} finally {
  await handle.close();
}

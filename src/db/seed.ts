/**
 * `npm run seed`: migrates the configured database and fills the `records` schema with demo
 * customers and orders for `read_records`. Safe to run again: existing rows are left alone.
 * With the embedded database, stop the server first (PGlite allows one process per data directory).
 */
import { isMemoryDataDir, loadConfig } from '../config.ts';
import { createDb } from './create-db.ts';
import { DataDirLockedError } from './data-dir-lock.ts';
import { migrateToLatest } from './migrate.ts';
import { seedRecords } from './repositories/records-seed.ts';

const config = loadConfig();
if (config.databaseUrl === null && isMemoryDataDir(config.dataDir)) {
  console.warn('AIRLOCK_DATA_DIR is memory://: the seeded rows will vanish when this script exits.');
}
const handle = await createDb(config).catch((error: unknown) => {
  console.error(error instanceof DataDirLockedError ? error.message : error);
  process.exit(1);
});
try {
  const applied = await migrateToLatest(handle.db);
  console.log(applied.length > 0 ? `Applied migrations: ${applied.join(', ')}` : 'Migrations: up to date.');
  const report = await seedRecords(handle.db);
  console.log(
    `Seeded the records schema (${handle.kind}): ${report.customersInserted} new customers, ${report.ordersInserted} new orders ` +
      '(rows already present were kept).',
  );
  console.log('Non-admin users need a grant to read them: grantTable(userId, table: "customers" or "orders").');
} catch (error) {
  process.exitCode = 1;
  console.error(`Seeding failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await handle.close();
}

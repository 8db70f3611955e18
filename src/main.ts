import { ConfigError, loadConfig } from './config.ts';
import { createDb } from './db/create-db.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';

// Entry: config → db → migrate → server.start(); SIGTERM/SIGINT → stop().
try {
  const config = loadConfig();
  // The embedded database opens (on a first start: its cluster is created by a child process) while
  // the server's modules load, which takes about as long. Its refusal (a locked data directory) is
  // reported by createApp, which awaits it.
  const database = config.databaseUrl === null ? createDb(config) : undefined;
  database?.catch(() => undefined);
  const { createApp } = await import('./app.ts');
  const app = await createApp(config, { database });
  const { url } = await app.server.start();
  console.log(`Airlock is listening on ${url} (database: ${app.services.dbKind})`);
  if (app.admin.kind === 'generated') console.log(`Admin token (shown once, store it now): ${app.admin.token}`);
  const shutdown = () => void app.stop().then(() => process.exit(0));
  process.once('SIGTERM', shutdown).once('SIGINT', shutdown);
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof DataDirLockedError ? error.message : error);
  process.exit(1);
}

import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';

// Entry: config → db → migrate → server.start(); SIGTERM/SIGINT → stop().
try {
  const app = await createApp(loadConfig());
  const { url } = await app.server.start();
  console.log(`Airlock is listening on ${url} (database: ${app.services.dbKind})`);
  if (app.admin.kind === 'generated') console.log(`Admin token (shown once, store it now): ${app.admin.token}`);
  const shutdown = () => void app.stop().then(() => process.exit(0));
  process.once('SIGTERM', shutdown).once('SIGINT', shutdown);
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof DataDirLockedError ? error.message : error);
  process.exit(1);
}

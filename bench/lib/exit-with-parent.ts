/**
 * Preloaded (`--import ./bench/lib/exit-with-parent.ts`) into every process the harness starts,
 * including the Airlock server: when the harness goes away (its IPC channel closes) the child stops
 * too, gracefully (SIGTERM), so an interrupted benchmark never leaves servers behind. Listening for
 * `disconnect` keeps the channel referenced; every child here ends by an explicit exit anyway.
 */
process.once('disconnect', () => {
  process.kill(process.pid, 'SIGTERM');
  // A process that ignores SIGTERM is ended anyway.
  setTimeout(() => process.exit(1), 5_000).unref();
});

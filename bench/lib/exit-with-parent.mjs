/**
 * Preloaded (`--import ./bench/lib/exit-with-parent.mjs`) into every node process the harness starts,
 * including the Airlock server, and into the servers the tests start (test/helpers/instances.ts;
 * plain JavaScript so that the built server, which runs without tsx, can load it too): when the harness goes away its IPC channel closes — the kernel
 * closes it on any end of the harness, SIGKILL included — and the child then stops with its process
 * group (it leads one: `children.ts` spawns it `detached`), so that what it started in turn stops
 * too: gracefully (SIGTERM), then for good (SIGKILL) after 5 s, for a process that ignores SIGTERM.
 * The janitor (`bin/janitor.ts`) stops the same groups from outside; this is the second way.
 * Listening for `disconnect` keeps the channel referenced; every child here ends by an explicit exit
 * anyway.
 */
import { readFileSync } from 'node:fs';

/** The process group to stop: its own when it leads one, else only itself. */
function stopTarget() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return pgrp === process.pid ? -process.pid : process.pid;
  } catch {
    return process.pid;
  }
}

process.once('disconnect', () => {
  const target = stopTarget();
  setTimeout(() => process.kill(target, 'SIGKILL'), 5_000).unref();
  process.kill(target, 'SIGTERM');
});

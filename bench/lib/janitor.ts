/**
 * The harness's side of the janitor (`bin/janitor.ts`): a process in a session of its own, started
 * with the first thing the harness must not leave behind, told on a pipe what the harness holds
 * (process groups, private databases) and what it has let go of. When the pipe closes — the harness
 * ended, however it ended: SIGKILL leaves it no chance to clean up itself — the janitor stops the
 * groups and drops the databases still held.
 *
 * A write goes to the pipe during the call (libuv writes at once when nothing is queued), so what is
 * held is known to the janitor before the next line of the harness runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Held =
  /** A process group the harness started; `startTicks` of its leader tell a reused pid apart. */
  | { readonly kind: 'group'; readonly pgid: number; readonly startTicks: number | null; readonly label: string }
  /** A private database, dropped on the server `adminUrl` connects to. */
  | { readonly kind: 'database'; readonly name: string; readonly adminUrl: string };

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let janitor: ChildProcess | null = null;

function startJanitor(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bin/janitor.ts', String(process.pid)], {
    cwd: REPO_ROOT,
    // Its own session: Ctrl-C on the harness's terminal, or a signal to the harness's group, does not reach it.
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  // It must not keep the harness alive, and a janitor that died must not take the harness with it.
  child.unref();
  child.stdin!.on('error', () => undefined);
  (child.stdin as unknown as { unref(): void }).unref();
  return child;
}

function tell(message: { op: 'hold' | 'release' } & Held): void {
  janitor ??= startJanitor();
  janitor.stdin!.write(`${JSON.stringify(message)}\n`);
}

/** The janitor will stop (group) or drop (database) `held` if the harness ends without doing so. */
export const janitorHolds = (held: Held): void => tell({ op: 'hold', ...held });

/** The harness stopped or dropped `held` itself. */
export const janitorReleases = (held: Held): void => tell({ op: 'release', ...held });

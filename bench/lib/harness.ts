/**
 * How a bench entry runs (`await runHarness(main)`): first the private databases earlier benches
 * left behind are dropped (`dropLeftoverDatabases`), then `main` runs; however it ends — it returns,
 * it throws, an error is thrown where nothing catches it, SIGINT, SIGTERM or SIGHUP arrives — the
 * harness stops its children's process groups, drops its private databases and runs what was left
 * to undo (`atHarnessEnd`) before it exits, with a line on stderr for each. SIGKILL leaves it no
 * chance to: the janitor (`janitor.ts`) then stops the same groups and drops the same databases.
 */
import { killAllChildrenNow, runningChildren, stopAllChildren } from './children.ts';
import { progressDone } from './progress.ts';
import { dropAllPrivateDatabases, dropLeftoverDatabases } from './private-databases.ts';

/** A line about the clean-up, on stderr, after any progress line. */
export function sayCleanup(line: string): void {
  progressDone();
  console.error(`[bench] ${line}`);
}

const undos = new Set<() => void | Promise<void>>();

/** Runs `undo` when the harness ends, unless the returned function is called first (the work undid itself). */
export function atHarnessEnd(undo: () => void | Promise<void>): () => void {
  undos.add(undo);
  return () => undos.delete(undo);
}

async function leaveNothingBehind(): Promise<void> {
  const children = runningChildren();
  if (children.length > 0) sayCleanup(`stopping ${children.map(({ label, pid }) => `${label} (pid ${pid})`).join(', ')}`);
  await stopAllChildren().catch((error: unknown) => sayCleanup(`${error instanceof Error ? error.message : String(error)} (the janitor tries again)`));
  await dropAllPrivateDatabases(sayCleanup);
  for (const undo of undos) {
    undos.delete(undo);
    await Promise.resolve()
      .then(undo)
      .catch((error: unknown) => sayCleanup(`could not undo: ${error instanceof Error ? error.message : String(error)}`));
  }
}

export async function runHarness(main: () => Promise<void>): Promise<void> {
  // Without a reachable PostgreSQL server there is nothing to drop (and the workloads that need one say so).
  await dropLeftoverDatabases(sayCleanup).catch(() => undefined);

  let cleaning: Promise<void> | null = null;
  const cleanUp = () => (cleaning ??= leaveNothingBehind());
  const endNow = (code: number, why: string) => {
    sayCleanup(`${why}: cleaning up before exiting (a second signal leaves it to the janitor)`);
    void cleanUp().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => endNow(130, 'SIGINT'));
  process.once('SIGTERM', () => endNow(143, 'SIGTERM'));
  process.once('SIGHUP', () => endNow(129, 'SIGHUP'));
  const crash = (error: unknown) => {
    console.error(error);
    endNow(1, 'an error nothing caught');
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  // Whatever calls process.exit() without cleaning up: its children's groups, at least, end with it.
  process.once('exit', killAllChildrenNow);

  try {
    await main();
  } catch (error) {
    // Once a signal or a crash is ending the harness, main's error is only its echo.
    if (cleaning === null) console.error(error);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

/**
 * Processes the harness starts: servers (ready when a line on stdout matches), drivers (request and
 * answer over IPC) and plain commands (`startProcess`: `npm start`'s command, redis-server). Each
 * leads a process group of its own and is stopped as a group (SIGTERM, SIGKILL after a grace), so
 * that what it starts in turn stops with it; each is held by the janitor (`janitor.ts`) until then,
 * so that none outlives the harness, however the harness ends. Node children are also preloaded with
 * `exit-with-parent.mjs`: they stop their group themselves when the harness's IPC channel closes.
 */
import { type ChildProcess, fork, spawn, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Held, janitorHolds, janitorReleases } from './janitor.ts';
import { processStartTicks } from './proc.ts';
import { groupEnded, signalGroup, STOP_GRACE_MS, stopGroup } from './process-groups.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PRELOAD = ['--import', 'tsx', '--import', './bench/lib/exit-with-parent.mjs'];

interface Running {
  readonly child: ChildProcess;
  readonly held: Extract<Held, { kind: 'group' }>;
  stopping?: Promise<void>;
}

/** Children whose group may still run, by pid (= their process group id). */
const running = new Map<number, Running>();

/** Leads `child`'s group from now on: held here and by the janitor until the whole group has ended. */
function hold(child: ChildProcess, label: string): void {
  const pid = child.pid;
  // No pid: the spawn failed, and the child's 'error' event says why.
  if (pid === undefined) return;
  const held = { kind: 'group', pgid: pid, startTicks: processStartTicks(pid), label } as const;
  janitorHolds(held);
  running.set(pid, { child, held });
  // A child that ended by itself (a crash, a SIGKILL a workload sent) may leave its group running.
  child.once('exit', () => {
    void groupEnded(pid, 0).then((ended) => {
      if (ended && running.get(pid)?.stopping === undefined) release(pid);
    });
  });
}

function release(pid: number): void {
  const entry = running.get(pid);
  if (!entry) return;
  running.delete(pid);
  janitorReleases(entry.held);
}

/** What is still running: the label and pid of each child whose group has not ended. */
export const runningChildren = (): { readonly label: string; readonly pid: number }[] =>
  [...running.values()].map(({ held }) => ({ label: held.label, pid: held.pgid }));

/** Stops every child still running (on exit paths of the harness). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running.values()].map(({ child }) => stopChild(child)));
}

/** SIGKILL to every group still running, at once: the last resort of a harness that exits now. */
export function killAllChildrenNow(): void {
  for (const pid of running.keys()) signalGroup(pid, 'SIGKILL');
}

/** Stops `child` with its group: SIGTERM, SIGKILL to what is left after `graceMs`; resolves once all ended. */
export function stopChild(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  const pid = child.pid;
  const entry = pid === undefined ? undefined : running.get(pid);
  if (pid === undefined || !entry) return Promise.resolve();
  entry.stopping ??= (async () => {
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit');
    if (!(await stopGroup(pid, graceMs))) {
      // Left held: the janitor tries again when the harness has ended.
      entry.stopping = undefined;
      throw new Error(`${entry.held.label} (process group ${pid}) outlived SIGKILL`);
    }
    await exited;
    release(pid);
  })();
  return entry.stopping;
}

/**
 * Spawns `command` as the leader of a new process group, held until it is stopped (`stopChild`).
 * The caller listens for 'error' (a command that could not be started).
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { readonly env?: Record<string, string>; readonly stdio: StdioOptions; readonly label?: string },
): ChildProcess {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...options.env }, stdio: options.stdio, detached: true });
  hold(child, options.label ?? [command, ...args].map((word) => path.basename(word)).join(' '));
  return child;
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The first match of the ready pattern. */
  readonly ready: RegExpExecArray;
  /** The last lines it wrote (for error reports). */
  tail(): string;
  stop(): Promise<void>;
}

/** Starts `node --import tsx <script>` and waits until a stdout line matches `readyPattern`. */
export function startServer(
  script: string,
  env: Record<string, string>,
  readyPattern: RegExp,
  options: { timeoutMs?: number; nodeArgs?: readonly string[] } = {},
): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const child = startProcess(process.execPath, [...(options.nodeArgs ?? []), ...PRELOAD, script], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    label: script,
  });
  const lines: string[] = [];
  const remember = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(line);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  const tail = () => lines.slice(-20).join('\n');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${script} was not ready within ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      void stopChild(child).then(() => reject(error), reject);
    };
    let buffered = '';
    const onStdout = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const match = readyPattern.exec(buffered);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onStdout);
      child.off('exit', onExit);
      resolve({ child, pid: child.pid!, ready: match, tail, stop: () => stopChild(child) });
    };
    const onExit = (code: number | null) => fail(new Error(`${script} exited (code ${code}) before it was ready:\n${tail()}`));
    child.stdout!.on('data', remember).on('data', onStdout);
    child.stderr!.on('data', remember);
    child.once('exit', onExit);
    child.once('error', fail);
  });
}

export interface Driver {
  readonly pid: number;
  /** Sends one request and resolves with the driver's answer (rejects on its error). */
  request<T>(message: object): Promise<T>;
  stop(): Promise<void>;
}

/** Forks `node --import tsx <script>`, which answers `{ id, ...request }` with `{ id, result | error }`. */
export function startDriver(script: string, env: Record<string, string> = {}): Promise<Driver> {
  const child = fork(path.join(REPO_ROOT, script), [], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    execArgv: PRELOAD,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  hold(child, script);
  let nextId = 0;
  const pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  child.on('message', (message: { id: number; result?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error !== undefined) waiter.reject(new Error(message.error));
    else waiter.resolve(message.result);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${script} exited (code ${code})`));
    pending.clear();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () =>
      resolve({
        pid: child.pid!,
        request: <T>(message: object) =>
          new Promise<T>((resolveRequest, rejectRequest) => {
            const id = ++nextId;
            pending.set(id, { resolve: resolveRequest, reject: rejectRequest });
            child.send({ id, ...message });
          }),
        stop: () => stopChild(child),
      }),
    );
  });
}

/** The driver side: answers each request with `handler`'s result, or its error message. */
export function serveDriver(handler: (message: any) => Promise<unknown>): void {
  process.on('message', (message: { id: number }) => {
    handler(message).then(
      (result) => process.send!({ id: message.id, result }),
      (error: unknown) => process.send!({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
}

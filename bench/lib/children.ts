/**
 * Processes the harness starts: servers (ready when a line on stdout matches) and drivers (request
 * and answer over IPC). Each is preloaded with `exit-with-parent.ts`, stopped by its own pid, and
 * never outlives the harness.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PRELOAD = ['--import', 'tsx', '--import', './bench/lib/exit-with-parent.ts'];

const started = new Set<ChildProcess>();

/** Stops every child still running (on exit paths of the harness). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...started].map((child) => stopChild(child)));
}

export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    started.delete(child);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      started.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
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
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...PRELOAD, script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  started.add(child);
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
      void stopChild(child).then(() => reject(error));
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
  });
  started.add(child);
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

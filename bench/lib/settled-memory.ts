/**
 * The harness side of `memory-probe.ts` (workload 4 and the load scenario): a server started with
 * `MEMORY_PROBE_NODE_ARGS` and `BENCH_MEMORY_REPORT=<file>` runs a full garbage collection on SIGUSR2
 * and writes `process.memoryUsage()` to that file; `readSettledMemory` asks for one and reads it.
 */
import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** `process.memoryUsage()` of the server after a full GC, bytes, and the resources it holds. */
export interface SettledMemory {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** Active handles and requests by kind (`process.getActiveResourcesInfo()`), after the GC. */
  readonly resources: Readonly<Record<string, number>>;
}

/** Node arguments that give the server a `gc()` and preload the probe. */
export const MEMORY_PROBE_NODE_ARGS: readonly string[] = ['--expose-gc', '--import', 'tsx', '--import', './bench/lib/memory-probe.ts'];

/** How often the report file is looked for, ms. */
const POLL_MS = 50;

/**
 * A settled reading of `pid`, which writes `reportFile`: first a second's pause (closing sockets and
 * their timers finish), then SIGUSR2; throws when no report was written within `timeoutMs`.
 */
export async function readSettledMemory(pid: number, reportFile: string, timeoutMs: number): Promise<SettledMemory> {
  rmSync(reportFile, { force: true });
  await sleep(1_000);
  process.kill(pid, 'SIGUSR2');
  for (let attempt = 0; attempt < timeoutMs / POLL_MS; attempt++) {
    await sleep(POLL_MS);
    try {
      const usage = JSON.parse(readFileSync(reportFile, 'utf8')) as SettledMemory;
      return { rss: usage.rss, heapTotal: usage.heapTotal, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers, resources: usage.resources ?? {} };
    } catch {
      // not written yet
    }
  }
  throw new Error('the memory probe did not answer');
}

/**
 * Preloaded into the Airlock server by workload 4 and the load scenario only (`--expose-gc --import
 * ./bench/lib/memory-probe.ts`, BENCH_MEMORY_REPORT=<file>): on SIGUSR2 it runs a full garbage
 * collection and writes `process.memoryUsage()` to that file, so the harness can read a settled heap
 * and RSS from outside (`settled-memory.ts`). Nothing in src/ knows about it.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_REPORT;
if (file) {
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    const resources: Record<string, number> = {};
    for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
    writeFileSync(file, JSON.stringify({ at: Date.now(), ...process.memoryUsage(), resources }));
  });
}

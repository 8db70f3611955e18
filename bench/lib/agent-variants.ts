/**
 * Workload 1's agent runs (K tool rounds, `runAgent` over graphql-ws from `bin/agent-driver.ts`, c
 * workers) on several Airlock servers that differ only in their environment: every server warmed up
 * alike, then measured in interleaved repetitions (by default the order rotates every repetition,
 * so no variant always follows the same other one), the server's CPU read from /proc around each
 * batch. Workload 8 (tracing off / on) and the durable workload (checkpoints on / off) are this,
 * with one variable.
 */
import type { BatchRequest, BatchResult } from '../bin/agent-driver.ts';
import { backendPids, type AirlockUnderTest } from './airlock.ts';
import type { Driver } from './children.ts';
import { cpuMs, cpuMsByPid } from './proc.ts';
import { progress } from './progress.ts';

export interface ServerVariant<V extends string> {
  readonly name: V;
  readonly airlock: AirlockUnderTest;
}

export interface AgentVariantsOptions<V extends string, E> {
  readonly variants: readonly ServerVariant<V>[];
  readonly driver: Driver;
  readonly fakeBaseUrl: string;
  readonly k: number;
  readonly runs: number;
  readonly concurrency: number;
  readonly repetitions: number;
  /** Runs of every variant before the clock starts (the same for all). */
  readonly warmUpRuns: number;
  /** Prefix of the progress line. */
  readonly label: string;
  /** Also read the CPU of the PostgreSQL backends serving each server's database (not the server's CPU). */
  readonly databaseCpu?: boolean;
  /** The order of the batches of one repetition (default: the variants rotated by one every repetition). */
  readonly order?: (repetition: number) => readonly V[];
  /** Started before each measured batch; what it resolves with after the batch is kept with the sample. */
  readonly around?: (variant: V) => () => Promise<E>;
}

export interface AgentBatchSample<V extends string, E = undefined> {
  readonly variant: V;
  readonly repetition: number;
  readonly runs: number;
  /** Provider calls of the batch (K + 1 per run): workload 1's step. */
  readonly providerCalls: number;
  readonly wallMs: number;
  /** utime + stime of the server process over the batch (10 ms ticks). */
  readonly serverCpuMs: number | null;
  /** With `databaseCpu`, on PostgreSQL: its backends serving this server's database. */
  readonly databaseCpuMs: number | null;
  readonly extra: E | undefined;
}

export async function measureAgentVariants<V extends string, E = undefined>(options: AgentVariantsOptions<V, E>): Promise<AgentBatchSample<V, E>[]> {
  const batch = (airlock: AirlockUnderTest, runs: number) => {
    const request: BatchRequest & { type: string } = {
      type: 'batch',
      variant: 'airlock',
      runs,
      concurrency: options.concurrency,
      k: options.k,
      fakeBaseUrl: options.fakeBaseUrl,
      airlock: { wsUrl: airlock.wsUrl, token: airlock.userToken, configurationId: airlock.configurationId },
    };
    return options.driver.request<BatchResult>(request);
  };
  const backends = async (airlock: AirlockUnderTest) =>
    options.databaseCpu && airlock.databaseName ? cpuMsByPid(await backendPids(airlock.databaseName)) : null;

  for (const { name, airlock } of options.variants) {
    progress(`[${options.label}] warm-up, ${name} (${options.warmUpRuns} runs)`);
    await batch(airlock, options.warmUpRuns);
  }
  const samples: AgentBatchSample<V, E>[] = [];
  const count = options.variants.length;
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    const order = options.order
      ? options.order(repetition).map((name) => options.variants.find((variant) => variant.name === name)!)
      : options.variants.map((_, index) => options.variants[(index + repetition) % count]!);
    for (const { name, airlock } of order) {
      progress(`[${options.label}] repetition ${repetition + 1}/${options.repetitions}, ${name}: ${options.runs} runs at c = ${options.concurrency}`);
      const finish = options.around?.(name);
      const dbBefore = await backends(airlock);
      const cpuBefore = cpuMs(airlock.server.pid);
      const result = await batch(airlock, options.runs);
      const cpuAfter = cpuMs(airlock.server.pid);
      // Backends born during the batch (the pool grew, or reconnected after its idle timeout) count in full.
      const dbAfter = dbBefore === null ? null : await backends(airlock);
      samples.push({
        variant: name,
        repetition,
        runs: options.runs,
        providerCalls: result.steps,
        wallMs: result.wallMs,
        serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
        databaseCpuMs: dbBefore === null || dbAfter === null ? null : [...dbAfter].reduce((sum, [pid, value]) => sum + value - (dbBefore.get(pid) ?? 0), 0),
        extra: finish ? await finish() : undefined,
      });
    }
  }
  return samples;
}

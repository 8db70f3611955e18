/**
 * `npm run bench`: every workload of DESIGN.md section 10 / issue 8, each printed as a table and
 * written with the machine, versions and command to `bench/results/latest.json`.
 *
 *   BENCH_QUICK=1 npm run bench            # ~30 s smoke run (small N, few repetitions)
 *   BENCH_ONLY=agent,micro npm run bench   # a subset: agent, fanout, persistence, memory, load, micro, runupdates, tracing, mcp, footprint, durable, subscribers
 *   BENCH_LOAD_SECONDS=120 npm run bench   # measured length of the load scenario (default 60 s, after a 60 s
 *                                          # warm-up: BENCH_LOAD_WARMUP_SECONDS; quick: 10 s after 5 s)
 *
 * Every figure is a median of interleaved repetitions and is shown as a ratio to a baseline measured
 * in the same run: the machine is small and noisy, absolute numbers do not travel. However the run
 * ends, it leaves no process and no private database behind (`lib/harness.ts`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../lib/children.ts';
import { runHarness } from '../lib/harness.ts';
import { progressDone } from '../lib/progress.ts';
import type { TargetCheck } from '../lib/targets.ts';
import { runAgentRuns } from '../workloads/agent-runs.ts';
import { fanoutTarget, runFanout, twoInstanceTarget } from '../workloads/fanout.ts';
import { runRunUpdates, runUpdatesTargets } from '../workloads/runupdates.ts';
import { runLoad } from '../workloads/load.ts';
import { runMemory } from '../workloads/memory.ts';
import { runMicro } from '../workloads/micro.ts';
import { runPersistence } from '../workloads/persistence.ts';
import { runTracing } from '../workloads/tracing.ts';
import { durableTargets, runDurable } from '../workloads/durable.ts';
import { footprintTargets, runFootprint } from '../workloads/footprint.ts';
import { runMcp, type McpResult } from '../workloads/mcp.ts';
import { runSubscribers } from '../workloads/subscribers.ts';
import { fmt, fmtRatio, ratio } from '../lib/stats.ts';

const quick = process.env.BENCH_QUICK === '1';
const only = new Set((process.env.BENCH_ONLY ?? 'agent,fanout,persistence,memory,load,micro,runupdates,tracing,mcp,footprint,durable,subscribers').split(',').map((name) => name.trim()));

interface WorkloadReport {
  readonly title: string;
  readonly status: 'measured' | 'not measured' | 'failed';
  readonly reason?: string;
  readonly table?: string;
  readonly targets?: readonly TargetCheck[];
  readonly result?: unknown;
}

function packageVersion(name: string): string | null {
  try {
    return (JSON.parse(readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

/** The commit measured and whether the working tree differed from it (read-only git calls). */
function gitState(): { commit: string | null; uncommittedChanges: string[] | null } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const changes = git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean).map((line) => line.slice(3));
    return { commit: git('rev-parse', '--short', 'HEAD').trim(), uncommittedChanges: changes };
  } catch {
    return { commit: null, uncommittedChanges: null };
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const reports: Record<string, WorkloadReport> = {};
  const print = (key: string, report: WorkloadReport) => {
    reports[key] = report;
    progressDone();
    console.log(`\n## ${report.title}${report.status === 'measured' ? '' : ` — ${report.status}${report.reason ? `: ${report.reason}` : ''}`}`);
    if (report.table) console.log(report.table);
    for (const check of report.targets ?? []) console.log(`  target ${check.met === null ? 'n/a' : check.met ? 'MET    ' : 'NOT MET'}  ${check.target}: ${check.figure}`);
  };
  const attempt = async (key: string, title: string, body: () => Promise<Omit<WorkloadReport, 'title' | 'status'>>) => {
    if (!only.has(key)) return print(key, { title, status: 'not measured', reason: 'left out by BENCH_ONLY' });
    try {
      print(key, { title, status: 'measured', ...(await body()) });
    } catch (error) {
      print(key, { title, status: 'failed', reason: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  };

  console.log(`Airlock benchmarks (${quick ? 'quick' : 'full'}) — ${startedAt.toISOString()}, ${os.cpus().length} CPUs, node ${process.version}`);

  await attempt('agent', 'Workload 1 — agent runs', async () => {
    const result = await runAgentRuns({
      runs: quick ? 12 : 200,
      k: 3,
      concurrencies: [1, 8, 64],
      repetitions: quick ? 2 : 4,
      warmUpRuns: quick ? 40 : 400,
      latencyMs: Number(process.env.BENCH_FAKE_LATENCY_MS ?? '0'),
    });
    return { table: result.table, targets: agentTargets(result), result };
  });

  await attempt('fanout', `Workload 2 — fan-out (${quick ? 100 : '1 000'} graphql-ws clients on runEvents vs raw ws broadcast)`, async () => {
    const result = await runFanout({ clients: quick ? 100 : 1000, runs: quick ? 5 : 10, rounds: 10, latencyMs: 50, repetitions: quick ? 2 : 5, twoInstances: true });
    const twoInstances = twoInstanceTarget(result);
    return { table: result.table, targets: twoInstances ? [fanoutTarget(result), twoInstances] : [fanoutTarget(result)], result };
  });

  await attempt('persistence', 'Workload 3 — persistence (PostgreSQL)', async () => {
    const result = await runPersistence({
      runs: quick ? 60 : 400,
      concurrency: 64,
      repetitions: quick ? 2 : 5,
      rowsPerInsert: 100,
      poolSize: 10,
    });
    return {
      table: result.table,
      targets: [{ target: 'run store ≥ 50 % of the raw multi-row INSERT rate', figure: `${(result.ratio * 100).toFixed(0)} %`, met: result.ratio >= 0.5 }],
      result,
    };
  });

  await attempt('memory', 'Workload 4 — memory per idle subscription and churn', async () => {
    const result = await runMemory({ levels: quick ? [100, 300] : [100, 1000, 2000], churnCycles: quick ? 1000 : 10_000, churnConnections: 20 });
    const worst = Math.max(...result.idle.map((entry) => entry.rssKbPerSubscription));
    return {
      table: `${result.kind === 'postgres' ? 'PostgreSQL' : 'PGlite'} server\n${result.table}`,
      targets: [
        { target: '≤ 50 KB RSS per idle subscription (worst level)', figure: `${worst.toFixed(1)} KB`, met: worst <= 50 },
        {
          target: `< 5 % RSS growth after ${result.churn.cycles} subscribe/complete cycles`,
          figure: `${(result.churn.rssGrowth * 100).toFixed(1)} % (heap ${(result.churn.heapGrowth * 100).toFixed(1)} %)`,
          met: result.churn.rssGrowth < 0.05,
        },
      ],
      result,
    };
  });

  await attempt('load', 'Load — 200 concurrent runs + 1 000 idle subscriptions for 60 s (PostgreSQL)', async () => {
    const result = await runLoad({
      concurrency: quick ? 20 : 200,
      subscriptions: quick ? 100 : 1000,
      durationSeconds: Number(process.env.BENCH_LOAD_SECONDS ?? (quick ? '10' : '60')),
      warmUpSeconds: Number(process.env.BENCH_LOAD_WARMUP_SECONDS ?? (quick ? '5' : '60')),
      latencyMs: 20,
      k: 3,
    });
    return { table: result.table, targets: result.targets, result };
  });

  await attempt('runupdates', `Workload 7 — live runs list (200 runs in flight, 100 runUpdates subscribers over graphql-ws)`, async () => {
    const result = await runRunUpdates({ runs: 200, subscribers: Number(process.env.BENCH_RUNUPDATES_SUBSCRIBERS ?? 100), rounds: 5, latencyMs: 60 });
    return { table: result.table, targets: runUpdatesTargets(result), result };
  });

  await attempt('micro', 'Workload 5 — micro: the tool-result seam on 50 KB inputs', async () => {
    const result = await runMicro({ repetitions: quick ? 3 : 7, batchMs: quick ? 40 : 150 });
    return { table: result.table, result };
  });

  await attempt('tracing', 'Workload 8 — tracing overhead (agent runs with OpenTelemetry exporting to a local OTLP receiver vs off)', async () => {
    const result = await runTracing({ runs: quick ? 40 : 200, k: 3, concurrency: 8, repetitions: quick ? 2 : 5, warmUpRuns: quick ? 40 : 300 });
    return {
      table: result.table,
      targets: [
        {
          target: 'tracing on: overhead measured (no target set); spans actually exported',
          figure: `wall ${fmtRatio(result.overhead.wall)}, server CPU ${fmtRatio(result.overhead.cpu)} of tracing off; ${result.median.on.spansPerRun.toFixed(1)} spans per run`,
          met: result.median.on.spansPerRun > 0 ? null : false,
        },
      ],
      result,
    };
  });

  await attempt('mcp', 'MCP — tools/call through /mcp vs the SDK server without governance vs the tool function', async () => {
    const result = await runMcp({ calls: quick ? 200 : 2_000, concurrencies: [1, 8], repetitions: quick ? 2 : 5, warmUpCalls: quick ? 100 : 1_000 });
    return {
      table: result.table,
      targets: [{ target: 'MCP calls: measured (issue 17 set no target)', figure: mcpFigure(result), met: null }],
      result,
    };
  });

  await attempt('footprint', 'Footprint — `npm start`: time to listening and RSS (first start, restart, memory://, PostgreSQL)', async () => {
    const result = await runFootprint({ repetitions: 3 });
    return { table: result.table, targets: footprintTargets(result), result };
  });

  await attempt('durable', 'Durable runs — resume after a SIGKILL (lease expiry → first step on another instance) and the checkpoint\'s cost', async () => {
    const result = await runDurable({
      resume: { runs: quick ? 10 : 30, k: 6, latencyMs: 400, leaseMs: 3_000 },
      cost: { runs: quick ? 40 : 100, k: 3, concurrency: 8, repetitions: quick ? 4 : 10, warmUpRuns: quick ? 40 : 300 },
    });
    return { table: result.table, targets: durableTargets(result), result };
  });

  await attempt('subscribers', `Subscribers — ${quick ? '1 000' : '10 000'} idle runUpdates vs bare ws connections, then one run fanned out to as many runEvents watchers vs bare ws`, async () => {
    const result = await runSubscribers({ clients: quick ? 1_000 : 10_000, rounds: 3, latencyMs: 50, repetitions: quick ? 1 : 2, twoInstances: true });
    return { table: result.table, targets: result.targets, result };
  });

  const latest = {
    date: startedAt.toISOString(),
    durationSeconds: (Date.now() - startedAt.getTime()) / 1000,
    command: { argv: process.argv, quick, only: [...only], env: { BENCH_QUICK: process.env.BENCH_QUICK ?? null, BENCH_ONLY: process.env.BENCH_ONLY ?? null } },
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      memoryBytes: os.totalmem(),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      loadAverageAtStart: os.loadavg(),
    },
    versions: Object.fromEntries(
      ['graphql', 'graphql-yoga', 'graphql-ws', 'ws', 'kysely', 'pg', '@electric-sql/pglite', 'ai', '@ai-sdk/openai', 'zod', 'tsx'].map((name) => [name, packageVersion(name)]),
    ),
    airlock: { version: packageVersion('..') ?? (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version, ...gitState() },
    workloads: reports,
  };
  const file = path.join(REPO_ROOT, 'bench', 'results', 'latest.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(latest, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(process.cwd(), file)} (${latest.durationSeconds.toFixed(0)} s).`);
}

function agentTargets(result: Awaited<ReturnType<typeof runAgentRuns>>): TargetCheck[] {
  const at = (variant: string, concurrency: number) => result.figures.find((figure) => figure.variant === variant && figure.concurrency === concurrency && figure.measured);
  const airlock = at('airlock-postgres', 8);
  const peer = at('ai-sdk', 8);
  const wallRatio = airlock?.ratioToBare?.wallMsPerStep ?? null;
  const peerWallRatio = peer?.ratioToBare?.wallMsPerStep ?? null;
  const airlockCpu = airlock?.median?.cpuMsPerStep ?? null;
  const peerCpu = peer?.median?.cpuMsPerStep ?? null;
  return [
    {
      target: 'c=8, PostgreSQL: Airlock wall ms/step ≤ 1.4 × bare loop',
      figure: wallRatio === null ? 'not measured' : `${wallRatio.toFixed(2)}×`,
      met: wallRatio === null ? null : wallRatio <= 1.4,
    },
    {
      target: 'c=8, PostgreSQL: Airlock wall ms/step ≤ AI SDK wall ms/step',
      figure: wallRatio === null || peerWallRatio === null ? 'not measured' : `${wallRatio.toFixed(2)}× vs ${peerWallRatio.toFixed(2)}× bare`,
      met: wallRatio === null || peerWallRatio === null ? null : wallRatio <= peerWallRatio,
    },
    {
      target: 'c=8, PostgreSQL: Airlock server CPU ms/step ≤ AI SDK process CPU ms/step',
      figure: airlockCpu === null || peerCpu === null ? 'not measured' : `${airlockCpu.toFixed(2)} vs ${peerCpu.toFixed(2)} ms (${(airlockCpu / peerCpu).toFixed(2)}×)`,
      met: airlockCpu === null || peerCpu === null ? null : airlockCpu <= peerCpu,
    },
  ];
}

await runHarness(main);

function mcpFigure(result: McpResult): string {
  const at = (server: 'airlock' | 'bare', concurrency: number) => result.figures.find((figure) => figure.server === server && figure.concurrency === concurrency)?.median;
  return [1, 8]
    .map((concurrency) => {
      const [airlock, bare] = [at('airlock', concurrency), at('bare', concurrency)];
      return airlock && bare
        ? `c = ${concurrency}: ${fmt(airlock.callsPerSecond)} calls/s = ${fmtRatio(ratio(airlock.callsPerSecond, bare.callsPerSecond))} the bare SDK server's ${fmt(bare.callsPerSecond)}`
        : `c = ${concurrency}: not measured`;
    })
    .join('; ');
}

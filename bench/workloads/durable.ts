/**
 * Durable runs (issue 27), two measures:
 *
 * 1. Resume latency (PostgreSQL): two Airlock processes A and B on one private database, a short
 *    lease (`AIRLOCK_RUN_LEASE_MS`). N runs start on A (`startRun`, K tool rounds, every provider
 *    call answered after a fixed latency by the fake server); once every run has stored a few
 *    steps and none has ended, A is killed with SIGKILL. Per run: from its lease's expiry — the
 *    `lease_expires_at` A's last renewal left, read once A is dead — to the first step B stored
 *    (the first `run_steps` row with epoch > 1), both by the database's clock.
 * 2. Checkpoint cost: workload 1's agent runs (`lib/agent-variants.ts`, the code path of workload 8)
 *    on servers that differ only in `AIRLOCK_RESUME_RUNS` (true: a sealed checkpoint at every step
 *    boundary; false: none), PGlite and PostgreSQL: server CPU per stored step and stored steps per
 *    second, true ÷ false. Each repetition runs the two servers of a database back to back (the
 *    order reversed every repetition), and the figure is the median of those paired ratios: on a
 *    shared machine the CPU per step drifts by 2 × within minutes, far more than the effect. So the
 *    sealing alone is timed too, in this process: the resume point every step of such a run carries.
 *
 * Targets (issue 27): resume ≤ lease + 2 s; checkpointing costs ≤ 10 % server CPU per step.
 *
 * Its parts: `durable/resume.ts` (1), `durable/checkpoint-cost.ts` (2), `durable/sealing.ts` (the
 * sealing alone); this file runs them and reports.
 */
import { postgresAvailable, type DbKind } from '../lib/airlock.ts';
import { fmt, fmtRatio, renderTable } from '../lib/stats.ts';
import type { TargetCheck } from '../lib/targets.ts';
import { measureCheckpointCost, type CostOptions, type CostResult } from './durable/checkpoint-cost.ts';
import { measureResume, type ResumeOptions, type ResumeResult } from './durable/resume.ts';
import { measureSealing, type SealingResult } from './durable/sealing.ts';

export interface DurableOptions {
  readonly resume: ResumeOptions;
  readonly cost: CostOptions;
}

export interface DurableResult {
  readonly resume: ResumeResult | { readonly notMeasured: string };
  readonly cost: CostResult;
  readonly sealing: SealingResult;
  readonly table: string;
}

export async function runDurable(options: DurableOptions): Promise<DurableResult> {
  const resume = (await postgresAvailable()) ? await measureResume(options.resume) : { notMeasured: 'no PostgreSQL server answers at BENCH_DATABASE_URL' };
  const cost = await measureCheckpointCost(options.cost);
  const sealing = measureSealing(options.cost.k, 2_000);
  return { resume, cost, sealing, table: renderDurable(resume, cost, sealing) };
}

const KIND_LABEL: Record<DbKind, string> = { postgres: 'PostgreSQL', pglite: 'PGlite' };
const range = ([low, high]: readonly [number, number]) => `${low.toFixed(2)}–${high.toFixed(2)}`;

function renderDurable(resume: DurableResult['resume'], cost: CostResult, sealing: SealingResult): string {
  const lines: string[] = [];
  if ('notMeasured' in resume) lines.push(`Resume latency: not measured (${resume.notMeasured})`);
  else {
    const { options } = resume;
    lines.push(
      `Resume latency (PostgreSQL): ${options.runs} runs on A (K = ${options.k}, ${options.latencyMs} ms per provider call), A killed with SIGKILL mid-flight, ` +
        `B continues them; AIRLOCK_RUN_LEASE_MS = ${options.leaseMs} (heartbeat ${resume.heartbeatMs} ms; an instance looks for lapsed leases every second)`,
      renderTable(
        ['ms (database clock)', 'p50', 'p99', 'max'],
        [
          ['lease expiry (A\'s last renewal) → first step stored by B', fmt(resume.fromExpiry.p50), fmt(resume.fromExpiry.p99), fmt(resume.fromExpiry.max)],
          ['SIGKILL → first step stored by B', fmt(resume.fromKill.p50), fmt(resume.fromKill.p99), fmt(resume.fromKill.max)],
          ['lease left at the kill', fmt(resume.leaseLeftAtKill.p50), fmt(resume.leaseLeftAtKill.p99), fmt(resume.leaseLeftAtKill.max)],
        ],
      ),
      `  ${resume.clean}/${resume.runs.length} runs COMPLETED, taken over once, no sequence stored twice or missing; ` +
        `${resume.stepsMadeAgain} steps stored beyond ${3 * options.k + 2} per run (the calls in flight at the kill, made again)`,
      '',
    );
  }
  const { options } = cost;
  lines.push(
    `Checkpoint cost: ${options.runs} runs × ${cost.stepsPerRun} stored steps (K = ${options.k}) at c = ${options.concurrency}, runAgent over graphql-ws, METADATA, ` +
      `${options.repetitions} repetitions after ${options.warmUpRuns} warm-up runs, medians; a step is one stored row; ` +
      `× false: median of the per-repetition ratios (true and false back to back), their range in brackets`,
  );
  const rows: string[][] = [];
  for (const kind of cost.kinds) {
    for (const checkpoints of ['false', 'true'] as const) {
      const figures = cost.median[`${kind} ${checkpoints}`]!;
      const ratios = cost.ratio[kind]!;
      const on = checkpoints === 'true';
      const updated = kind === 'postgres' ? cost.rowsUpdatedPerRun[checkpoints] : undefined;
      rows.push([
        `${KIND_LABEL[kind]}, AIRLOCK_RESUME_RUNS=${checkpoints}`,
        fmt(figures.serverCpuMsPerStep),
        on ? `${fmtRatio(ratios.cpu)} (${range(ratios.cpuRange)})` : '1.00×',
        fmt(figures.stepsPerSecond),
        on ? `${fmtRatio(ratios.throughput)} (${range(ratios.throughputRange)})` : '1.00×',
        fmt(figures.databaseCpuMsPerStep),
        updated === undefined ? '—' : fmt(updated),
      ]);
    }
  }
  lines.push(renderTable(['server', 'server CPU ms/step', '× false', 'steps stored/s', '× false', 'db CPU ms/step', 'rows updated/run'], rows));
  const shares = cost.kinds.map((kind) => `${(sealing.microsecondsPerStep / (cost.median[`${kind} false`]!.serverCpuMsPerStep * 10)).toFixed(1)} % of ${KIND_LABEL[kind]}'s`);
  lines.push(
    `  sealing alone (this process): ${fmt(sealing.microsecondsPerSeal)} µs per seal, ${sealing.sealsPerRun} seals per run = ${fmt(sealing.microsecondsPerStep)} µs per stored step ` +
      `(${shares.join(', ')} CPU per step with false); the last checkpoint of a run is ${sealing.sealedBytesLastStep} bytes sealed`,
  );
  return lines.join('\n');
}

export function durableTargets(result: DurableResult): TargetCheck[] {
  const checks: TargetCheck[] = [];
  if ('notMeasured' in result.resume) checks.push({ target: 'resume ≤ lease + 2 s', figure: 'not measured', met: null });
  else {
    const { resume } = result;
    checks.push({
      target: `resume ≤ lease + 2 s: every run's first step on B ≤ 2 s after its lease expired (lease ${resume.options.leaseMs} ms)`,
      figure: `p50 ${fmt(resume.fromExpiry.p50)} / p99 ${fmt(resume.fromExpiry.p99)} / max ${fmt(resume.fromExpiry.max)} ms after expiry; ${resume.clean}/${resume.runs.length} runs clean`,
      met: resume.fromExpiry.max <= 2_000 && resume.clean === resume.runs.length,
    });
  }
  for (const kind of result.cost.kinds) {
    const ratios = result.cost.ratio[kind]!;
    checks.push({
      target: `${KIND_LABEL[kind]}: checkpointing costs ≤ 10 % server CPU per step (AIRLOCK_RESUME_RUNS true ÷ false)`,
      figure:
        `${fmtRatio(ratios.cpu)} (median of ${result.cost.options.repetitions} paired repetitions, ${range(ratios.cpuRange)}; ratio of the medians ${fmtRatio(ratios.cpuOfMedians)}); ` +
        `steps stored/s ${fmtRatio(ratios.throughput)} (${range(ratios.throughputRange)})`,
      met: ratios.cpu <= 1.1,
    });
  }
  const updated = result.cost.rowsUpdatedPerRun;
  if (updated.true !== undefined && updated.false !== undefined) {
    checks.push({
      target: 'PostgreSQL: checkpoints were stored (more rows updated per run with true than with false)',
      figure: `${fmt(updated.true)} vs ${fmt(updated.false)} rows updated per run`,
      met: updated.true > updated.false,
    });
  }
  return checks;
}

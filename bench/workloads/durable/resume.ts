/**
 * Durable runs, 1. resume latency (PostgreSQL): two Airlock processes A and B on one private
 * database, a short lease (`AIRLOCK_RUN_LEASE_MS`). N runs start on A (`startRun`, K tool rounds,
 * every provider call answered after a fixed latency by the fake server); once every run has stored
 * a few steps and none has ended, A is killed with SIGKILL. Per run: from its lease's expiry — the
 * `lease_expires_at` A's last renewal left, read once A is dead — to the first step B stored (the
 * first `run_steps` row with epoch > 1), both by the database's clock.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { BENCH_PROMPT } from '../../lib/agent-tool.ts';
import { joinAirlock, startAirlock, type AirlockUnderTest } from '../../lib/airlock.ts';
import { startServer } from '../../lib/children.ts';
import { progress, progressDone } from '../../lib/progress.ts';
import { quantiles, type Quantiles } from '../../lib/stats.ts';
import { inPool } from '../../lib/ws-client.ts';

export interface ResumeOptions {
  /** Runs in flight on A when it is killed. */
  readonly runs: number;
  /** Tool rounds per run (K + 1 provider calls, 3K + 2 stored steps). */
  readonly k: number;
  /** Latency of every provider call, ms: keeps the runs in flight. */
  readonly latencyMs: number;
  readonly leaseMs: number;
}

/** Milliseconds since the epoch, by the database's clock (microsecond precision kept as a fraction). */
const EPOCH_MS = (expression: string) => `extract(epoch from ${expression}) * 1000`;

interface ResumedRun {
  readonly id: string;
  readonly status: string;
  readonly resumeCount: number;
  /** Lease expiry A's last renewal left → B's first stored step. */
  readonly fromExpiryMs: number | null;
  /** The kill (the database's clock just before it) → B's first stored step. */
  readonly fromKillMs: number | null;
  /** How much of the lease was left at the kill. */
  readonly leaseLeftAtKillMs: number;
  readonly stepsBeforeKill: number;
  readonly steps: number;
  /** Sequences stored twice or missing between the first and the last. */
  readonly sequenceFaults: number;
}

export interface ResumeResult {
  readonly options: ResumeOptions;
  readonly heartbeatMs: number;
  readonly runs: readonly ResumedRun[];
  readonly fromExpiry: Quantiles;
  readonly fromKill: Quantiles;
  readonly leaseLeftAtKill: Quantiles;
  /** Runs that ended COMPLETED, were taken over exactly once, with no sequence fault. */
  readonly clean: number;
  /** Stored steps beyond 3K + 2 per run: the provider calls in flight at the kill, made again by B (their REQUEST step twice). */
  readonly stepsMadeAgain: number;
}

async function poll<T>(what: string, deadlineMs: number, read: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await sleep(20);
  }
}

async function startRuns(airlock: AirlockUnderTest, count: number): Promise<void> {
  await inPool(count, 8, async () => {
    const data = await airlock.gql<{ startRun: { __typename: string; message?: string } }>(
      `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Error { message } } }`,
      { input: { configurationId: airlock.configurationId, prompt: BENCH_PROMPT } },
      airlock.userToken,
    );
    if (data.startRun.__typename !== 'Run') throw new Error(`startRun refused: ${JSON.stringify(data.startRun)}`);
  });
}

export async function measureResume(options: ResumeOptions): Promise<ResumeResult> {
  const step = (text: string) => progress(`[durable: resume] ${text}`);
  const stops: (() => Promise<void>)[] = [];
  // The heartbeat the run host derives from the lease (leaseTimings in src/services/run-host/lease-keeper.ts): a third of it, at most 10 s.
  const heartbeatMs = Math.min(10_000, Math.max(Math.floor(options.leaseMs / 3), 10));
  try {
    step('starting the fake OpenAI server and two Airlock servers A and B on one PostgreSQL database');
    const fake = await startServer('bench/bin/fake-openai.ts', { FAKE_OPENAI_K: String(options.k), FAKE_OPENAI_LATENCY_MS: String(options.latencyMs) }, /listening (\d+)/);
    stops.push(() => fake.stop());
    const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
    // No Redis: the figures are read from the database, and nothing watches B's live events.
    const a = await startAirlock('postgres', { fakeBaseUrl, k: options.k, env: { AIRLOCK_RUN_LEASE_MS: String(options.leaseMs), AIRLOCK_RESUME_RUNS: 'true' } });
    stops.push(() => a.stop()); // after A's death: drops the database
    const b = await joinAirlock(a);
    stops.push(() => b.stop());
    const db = new pg.Client({ connectionString: a.env.DATABASE_URL });
    await db.connect();
    stops.push(() => db.end());

    const runIds = async (): Promise<string[]> => (await db.query<{ id: string }>(`select id from runs where kind = 'AGENT'`)).rows.map((row) => row.id);
    const settled = (ids: readonly string[]) =>
      db.query<{ n: string }>(`select count(*) as n from runs where id = any($1) and status <> 'RUNNING'`, [ids]).then((result) => Number(result.rows[0]!.n) === ids.length);

    // Warm-up: the same runs to their end on each instance (JIT, pools), so that B's takeover is not its first run.
    step(`warm-up: ${options.runs} runs on each instance`);
    await Promise.all([startRuns(a, options.runs), startRuns(b, options.runs)]);
    const warmUp = await runIds();
    await poll('the warm-up runs ended', 120_000, async () => ((await settled(warmUp)) ? true : null));

    step(`starting ${options.runs} runs on A`);
    await startRuns(a, options.runs);
    const ids = (await runIds()).filter((id) => !warmUp.includes(id));
    if (ids.length !== options.runs) throw new Error(`${ids.length} runs found instead of ${options.runs}`);
    // Mid-flight: every run past its first tool round (REQUEST, LLM, TOOL, REQUEST stored), none ended.
    const minimumSteps = 4;
    step(`waiting until every run has stored ${minimumSteps} steps`);
    await poll(`every run RUNNING with ${minimumSteps} stored steps`, 60_000, async () => {
      const { rows } = await db.query<{ running: string; ready: string }>(
        `select count(*) filter (where status = 'RUNNING') as running,
                count(*) filter (where status = 'RUNNING' and (select count(*) from run_steps s where s.run_id = r.id) >= $2) as ready
           from runs r where id = any($1)`,
        [ids, minimumSteps],
      );
      const running = Number(rows[0]!.running);
      if (running < ids.length) throw new Error(`${ids.length - running} runs ended before A was killed: raise K or the latency`);
      return Number(rows[0]!.ready) === ids.length ? true : null;
    });
    const killedAt = Number((await db.query<{ at: string }>(`select ${EPOCH_MS('clock_timestamp()')} as at`)).rows[0]!.at);
    const exited = once(a.server.child, 'exit');
    process.kill(a.server.pid, 'SIGKILL');
    await exited;
    step(`A killed (SIGKILL); reading the leases it left`);
    // A statement A sent just before its death may still commit: read once it settled, well before
    // any lease lapses (B raises the epoch when it claims, so epoch 1 says the row is A's).
    await sleep(250);
    const leases = await db.query<{ id: string; expiry: string; epoch: number; steps: string }>(
      `select id, ${EPOCH_MS('lease_expires_at')} as expiry, lease_epoch as epoch, (select count(*) from run_steps s where s.run_id = r.id) as steps
         from runs r where id = any($1)`,
      [ids],
    );
    if (leases.rows.some((row) => row.epoch !== 1 || row.expiry === null)) throw new Error('a run was claimed before its lease was read: the lease is too short for this machine');
    step(`waiting for B to take the runs over and finish them (lease ${options.leaseMs} ms)`);
    await poll('B finished every run', options.leaseMs + 120_000, async () => ((await settled(ids)) ? true : null));

    const { rows } = await db.query<{ id: string; status: string; resume_count: number; first_resumed: string | null; steps: string; distinct_sequences: string; span: string }>(
      `select r.id, r.status, r.resume_count,
              (select ${EPOCH_MS('min(s.created_at)')} from run_steps s where s.run_id = r.id and s.epoch > 1) as first_resumed,
              (select count(*) from run_steps s where s.run_id = r.id) as steps,
              (select count(distinct s.sequence) from run_steps s where s.run_id = r.id) as distinct_sequences,
              (select max(s.sequence) - min(s.sequence) + 1 from run_steps s where s.run_id = r.id) as span
         from runs r where r.id = any($1)`,
      [ids],
    );
    const before = new Map(leases.rows.map((row) => [row.id, { expiry: Number(row.expiry), steps: Number(row.steps) }]));
    const runs: ResumedRun[] = rows.map((row) => {
      const lease = before.get(row.id)!;
      const first = row.first_resumed === null ? null : Number(row.first_resumed);
      const steps = Number(row.steps);
      return {
        id: row.id,
        status: row.status,
        resumeCount: row.resume_count,
        fromExpiryMs: first === null ? null : first - lease.expiry,
        fromKillMs: first === null ? null : first - killedAt,
        leaseLeftAtKillMs: lease.expiry - killedAt,
        stepsBeforeKill: lease.steps,
        steps,
        sequenceFaults: steps - Number(row.distinct_sequences) + Math.abs(Number(row.span) - Number(row.distinct_sequences)),
      };
    });
    const resumed = runs.filter((run) => run.fromExpiryMs !== null);
    if (resumed.length === 0) throw new Error('B stored no step of any run');
    return {
      options,
      heartbeatMs,
      runs,
      fromExpiry: quantiles(resumed.map((run) => run.fromExpiryMs!)),
      fromKill: quantiles(resumed.map((run) => run.fromKillMs!)),
      leaseLeftAtKill: quantiles(runs.map((run) => run.leaseLeftAtKillMs)),
      clean: runs.filter((run) => run.status === 'COMPLETED' && run.resumeCount === 1 && run.sequenceFaults === 0).length,
      stepsMadeAgain: runs.reduce((sum, run) => sum + run.steps - (3 * options.k + 2), 0),
    };
  } finally {
    progressDone();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

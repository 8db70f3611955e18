import { randomUUID } from 'node:crypto';
import { sql, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/create-db.ts';
import type { Db, RunRow } from '../../src/db/database.ts';
import { createRunWriter, type StepWrite, type UsageWrite } from '../../src/db/run-batch-writer.ts';
import { createRunRepository } from '../../src/db/run-repository.ts';
import { claimOrphanedRuns, LEASE_MOVED_ON, releaseLease, renewLeases, storeCheckpoint } from '../../src/db/repositories/run-leases.ts';
import { settleRun, settleRunWithoutOutcome, type Settlement } from '../../src/db/repositories/run-settlement.ts';
import { findRunsByIds, insertRun } from '../../src/db/repositories/runs.ts';
import type { RunOutcome } from '../../src/runtime/run.ts';
import { LeaseLostError } from '../../src/runtime/run-recorder.ts';
import { openMigratedDb, TEST_DATABASES } from '../helpers/databases.ts';

/**
 * The leases of durable runs (DESIGN.md section 8c, migration 20261202160000): the trigger that
 * refuses a step of a stale epoch, the batch writer storing a step's checkpoint with it, claims of
 * runs whose owner is gone (one claim wins), renewals, and the epoch on checkpoints and settlement.
 */

const LEASE_MS = 15_000;

const SETTLEMENT: Settlement = {
  status: 'COMPLETED',
  terminationReason: 'COMPLETED',
  truncated: false,
  iterations: 1,
  finalContent: 'done',
  promptTokens: 1,
  completionTokens: 1,
  estimatedCost: 0,
  errorMessage: null,
};

/** The SQLSTATE of a refused statement, on either driver. */
const sqlState = (error: unknown) => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined);

describe.each(TEST_DATABASES)('run leases on %s', (kind) => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;

  beforeAll(async () => {
    opened = await openMigratedDb(kind);
    db = opened.handle.db;
  });
  afterAll(() => opened.dispose());

  /** A RUNNING agent run whose process holds a lease (epoch 1), as a run start stores it. */
  const leasedRun = async (owner = 'instance-a', checkpoint: string | null = 'sealed-start') =>
    insertRun(db, {
      id: randomUUID(),
      configuration_id: null,
      user_id: null,
      status: 'RUNNING',
      prompt: null,
      privacy_level: 'METADATA',
      tool_selection: null,
      lease: { owner, ms: LEASE_MS, checkpoint },
    });
  /** Moves the run's lease on (what a claim by another process does to the epoch). */
  const moveOn = (runId: string) =>
    db.updateTable('runs').set({ lease_epoch: sql<number>`lease_epoch + 1`, lease_owner: 'instance-b' }).where('id', '=', runId).execute();
  const lapse = (runIds: readonly string[]) =>
    db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() - interval '1 second'` }).where('id', 'in', runIds).execute();
  const stepsOf = (runId: string) => db.selectFrom('run_steps').select(['sequence', 'epoch']).where('run_id', '=', runId).orderBy('sequence').execute();
  const runOf = async (runId: string): Promise<RunRow> => (await findRunsByIds(db, [runId]))[0]!;
  const insertStep = (runId: string, sequence: number, epoch: number | null) =>
    db.insertInto('run_steps').values({ run_id: runId, sequence, kind: 'LLM', round: 1, duration_ms: null, payload: JSON.stringify({ sequence }), epoch }).execute();
  const writeStep = (runId: string, sequence: number, epoch: number, checkpoint?: string): StepWrite => ({
    runId,
    sequence,
    kind: 'LLM',
    round: 1,
    durationMs: 1,
    payload: { sequence },
    epoch,
    ...(checkpoint ? { checkpoint } : {}),
  });

  const usageOf = (runId: string): UsageWrite => ({
    id: randomUUID(),
    userId: null,
    configurationId: randomUUID(),
    runId,
    modelId: randomUUID(),
    promptTokens: 10,
    completionTokens: 2,
    cost: 0.5,
  });

  describe('the epoch trigger', () => {
    it('should store a step of the current epoch, refuse one of an older epoch with AR001 and store nothing of it', async () => {
      const run = await leasedRun();
      await insertStep(run.id, 1, 1);
      await moveOn(run.id);
      const refused = await insertStep(run.id, 2, 1).then(
        () => null,
        (error: unknown) => error,
      );
      expect(sqlState(refused)).toBe(LEASE_MOVED_ON);
      expect(LEASE_MOVED_ON).toBe('AR001');
      await insertStep(run.id, 2, 2);
      expect(await stepsOf(run.id)).toEqual([
        { sequence: 1, epoch: 1 },
        { sequence: 2, epoch: 2 },
      ]);
    });

    it('should refuse a step of the current epoch once the run is no longer RUNNING', async () => {
      const run = await leasedRun();
      expect(await settleRun(db, run.id, SETTLEMENT, 1)).toBeDefined();
      const refused = await insertStep(run.id, 1, 1).then(
        () => null,
        (error: unknown) => error,
      );
      expect(sqlState(refused)).toBe(LEASE_MOVED_ON);
      expect(await stepsOf(run.id)).toEqual([]);
    });

    it('should not check a step without an epoch', async () => {
      const run = await leasedRun();
      await moveOn(run.id);
      await moveOn(run.id);
      await insertStep(run.id, 1, null);
      expect(await stepsOf(run.id)).toEqual([{ sequence: 1, epoch: null }]);
    });
  });

  describe('the batch writer', () => {
    it("should store a step's checkpoint on its run in the same statement as the step", async () => {
      let statements = 0;
      const counting: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: async (args) => (statements++, args.result) };
      const writer = createRunWriter(db.withPlugin(counting));
      const run = await leasedRun();
      // The usual shape: an LLM step with its point and the call's usage record.
      await Promise.all([writer.insertStep(writeStep(run.id, 1, 1, 'sealed-after-1')), writer.insertUsage(usageOf(run.id))]);
      expect(statements).toBe(1);
      expect(await stepsOf(run.id)).toEqual([{ sequence: 1, epoch: 1 }]);
      expect(await db.selectFrom('usage_records').select('run_id').where('run_id', '=', run.id).execute()).toHaveLength(1);
      expect((await runOf(run.id)).checkpoint).toBe('sealed-after-1');

      // Within one batch the last point of the run wins (steps are queued in sequence order).
      await Promise.all([writer.insertStep(writeStep(run.id, 2, 1, 'sealed-after-2')), writer.insertStep(writeStep(run.id, 3, 1, 'sealed-after-3'))]);
      expect(statements).toBe(2);
      expect((await runOf(run.id)).checkpoint).toBe('sealed-after-3');

      // A step without a point leaves the stored one as it is.
      await writer.insertStep(writeStep(run.id, 4, 1));
      expect((await runOf(run.id)).checkpoint).toBe('sealed-after-3');
    });

    it('should not store the checkpoint of a step that could not be stored (one statement: both or neither)', async () => {
      const writer = createRunWriter(db);
      const run = await leasedRun();
      await writer.insertStep(writeStep(run.id, 1, 1, 'sealed-after-1'));
      // The same sequence again: the insert fails (primary key), and its point must not be stored.
      await expect(writer.insertStep(writeStep(run.id, 1, 1, 'sealed-of-a-step-not-stored'))).rejects.toMatchObject({ code: '23505' });
      expect((await runOf(run.id)).checkpoint).toBe('sealed-after-1');
    });

    it("should store a current run's step and checkpoint and refuse only the stale run's, when a batch mixes them", async () => {
      const writer = createRunWriter(db);
      const [stale, current] = [await leasedRun(), await leasedRun()];
      await moveOn(stale.id);
      const results = await Promise.allSettled([
        writer.insertStep(writeStep(stale.id, 1, 1, 'sealed-by-the-paused-one')),
        writer.insertStep(writeStep(current.id, 1, 1, 'sealed-current')),
        writer.insertUsage(usageOf(current.id)),
      ]);
      expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: LEASE_MOVED_ON } });
      expect(results.slice(1)).toEqual([
        { status: 'fulfilled', value: undefined },
        { status: 'fulfilled', value: undefined },
      ]);
      expect(await stepsOf(stale.id)).toEqual([]);
      expect(await stepsOf(current.id)).toEqual([{ sequence: 1, epoch: 1 }]);
      expect((await runOf(stale.id)).checkpoint).toBe('sealed-start');
      expect((await runOf(current.id)).checkpoint).toBe('sealed-current');
    });

    it('should turn a refused step into LeaseLostError and a settlement refused for its epoch into LeaseLostError (run repository)', async () => {
      const repository = createRunRepository(db, createRunWriter(db));
      const run = await leasedRun();
      const step = { kind: 'LLM', round: 1, durationMs: 1 } as Parameters<typeof repository.insertStep>[2];
      await repository.insertStep(run.id, 1, step, { epoch: 1, checkpoint: 'sealed-1' });
      await moveOn(run.id);
      await expect(repository.insertStep(run.id, 2, step, { epoch: 1, checkpoint: 'sealed-2' })).rejects.toBeInstanceOf(LeaseLostError);
      const outcome: RunOutcome = {
        status: 'COMPLETED',
        terminationReason: 'COMPLETED',
        truncated: false,
        iterations: 1,
        finalContent: 'x',
        usage: { promptTokens: 1, completionTokens: 1, cost: 0 },
        errorMessage: null,
      };
      await expect(repository.settle(run.id, outcome, 'x', 1)).rejects.toBeInstanceOf(LeaseLostError);
      expect((await runOf(run.id)).status).toBe('RUNNING');
      expect(await repository.settle(run.id, outcome, 'x', 2)).toMatchObject({ id: run.id, status: 'COMPLETED' });
      // Settled already: exactly-once, not a lost lease.
      expect(await repository.settle(run.id, outcome, 'x', 2)).toBeNull();
    });
  });

  describe('claims', () => {
    // Claims look at every run of the database: each test starts with none open.
    beforeEach(async () => {
      await db.updateTable('runs').set({ status: 'COMPLETED', termination_reason: 'COMPLETED', lease_owner: null, lease_expires_at: null }).where('status', '=', 'RUNNING').execute();
    });

    it('should claim only RUNNING agent runs whose lease lapsed, or without a lease expiry whose heartbeat is stale', async () => {
      const lapsed = await leasedRun('instance-a');
      const live = await leasedRun('instance-a');
      const mcp = await leasedRun('instance-a');
      const waiting = await leasedRun('instance-a');
      const legacyStale = await leasedRun('instance-a');
      const legacyFresh = await leasedRun('instance-a');
      await lapse([lapsed.id, mcp.id, waiting.id]);
      await db.updateTable('runs').set({ kind: 'MCP' }).where('id', '=', mcp.id).execute();
      await db.updateTable('runs').set({ status: 'WAITING_FOR_APPROVAL' }).where('id', '=', waiting.id).execute();
      // Rows written before leases existed: no owner, no expiry; only the heartbeat says whether their process lives.
      await db.updateTable('runs').set({ lease_owner: null, lease_epoch: 0, lease_expires_at: null }).where('id', 'in', [legacyStale.id, legacyFresh.id]).execute();
      await db.updateTable('runs').set({ heartbeat_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', legacyStale.id).execute();

      const before = await findRunsByIds(db, [live.id, mcp.id, waiting.id, legacyFresh.id]);

      const claimed = await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 100 });
      expect(claimed.map((run) => run.id).sort()).toEqual([lapsed.id, legacyStale.id].sort());
      const [row] = claimed.filter((run) => run.id === lapsed.id);
      expect(row).toMatchObject({ lease_owner: 'instance-b', lease_epoch: 2, resume_count: 1, handed_over: false, checkpoint: 'sealed-start' });
      expect(row!.lease_expires_at!.getTime()).toBeGreaterThan(Date.now() + LEASE_MS / 2);
      expect(row!.state_version).toBe(lapsed.state_version + 1);
      expect(await findRunsByIds(db, [live.id, mcp.id, waiting.id, legacyFresh.id])).toEqual(before);
      // Claimed, the run is no longer an orphan.
      expect(await claimOrphanedRuns(db, { owner: 'instance-c', leaseMs: LEASE_MS, limit: 100 })).toEqual([]);
    });

    it('should say handed over exactly when the previous owner released the lease', async () => {
      const released = await leasedRun('instance-a');
      const crashed = await leasedRun('instance-a');
      expect(await releaseLease(db, { runId: released.id, epoch: 1 })).toBe(true);
      // A release under a stale epoch changes nothing.
      expect(await releaseLease(db, { runId: crashed.id, epoch: 0 })).toBe(false);
      await lapse([crashed.id]);
      const claimed = await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 100 });
      expect(Object.fromEntries(claimed.map((run) => [run.id, run.handed_over]))).toEqual({ [released.id]: true, [crashed.id]: false });
      for (const run of claimed) expect(run).toMatchObject({ lease_owner: 'instance-b', lease_epoch: 2, resume_count: 1 });
    });

    it('should never claim a run of its own owner, lapsed or not (a renewal that came late is not a death)', async () => {
      const own = await leasedRun('instance-a');
      await lapse([own.id]);
      expect(await claimOrphanedRuns(db, { owner: 'instance-a', leaseMs: LEASE_MS, limit: 100 })).toEqual([]);
      expect((await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 100 })).map((run) => run.id)).toEqual([own.id]);
    });

    it('should not say handed over for a row without a lease whose heartbeat went stale', async () => {
      const legacy = await leasedRun();
      await db.updateTable('runs').set({ lease_owner: null, lease_expires_at: null, heartbeat_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', legacy.id).execute();
      expect((await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 100 })).map((run) => [run.id, run.handed_over])).toEqual([[legacy.id, false]]);
    });

    it('should claim at most the limit, the longest lapsed first', async () => {
      const [older, newer] = [await leasedRun(), await leasedRun()];
      await db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() - interval '1 minute'` }).where('id', '=', older.id).execute();
      await lapse([newer.id]);
      expect((await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 1 })).map((run) => run.id)).toEqual([older.id]);
      expect((await claimOrphanedRuns(db, { owner: 'instance-b', leaseMs: LEASE_MS, limit: 1 })).map((run) => run.id)).toEqual([newer.id]);
    });

    it('should claim every run of another owner, lapsed or not, for a restarted embedded database (everyOtherOwner)', async () => {
      const [others, own] = [await leasedRun('previous-process'), await leasedRun('this-process')];
      const claimed = await claimOrphanedRuns(db, { owner: 'this-process', leaseMs: LEASE_MS, limit: 100, everyOtherOwner: true });
      expect(claimed.map((run) => run.id)).toEqual([others.id]);
      expect(await runOf(own.id)).toMatchObject({ lease_epoch: 1, resume_count: 0 });
    });

    it('should hand each of 20 lapsed runs to exactly one of 10 claimers claiming at once, on as many connections', async () => {
      const CLAIMERS = 10;
      const runs = await Promise.all(Array.from({ length: 20 }, () => leasedRun('instance-gone')));
      await lapse(runs.map((run) => run.id));
      // On PostgreSQL a connection per claimer, and a table lock they all wait behind, so that the
      // claims really run at once; PGlite has one connection.
      const handle = opened.database.databaseUrl ? await createDb({ databaseUrl: opened.database.databaseUrl, dataDir: 'memory://', poolSize: CLAIMERS }) : opened.handle;
      const blocker = opened.database.databaseUrl ? new pg.Client({ connectionString: opened.database.databaseUrl }) : null;
      try {
        const claim = (index: number) => claimOrphanedRuns(handle.db, { owner: `claimer-${index}`, leaseMs: LEASE_MS, limit: 20 });
        let claims: Promise<(RunRow & { handed_over: boolean })[]>[];
        if (blocker) {
          await blocker.connect();
          await blocker.query('begin; lock table runs in share mode');
          claims = Array.from({ length: CLAIMERS }, (_, index) => claim(index));
          for (let waited = 0; ; waited += 20) {
            const { rows } = await blocker.query(`select count(*)::int as n from pg_locks where relation = 'runs'::regclass and not granted`);
            if (rows[0].n >= CLAIMERS || waited > 10_000) break;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          await blocker.query('commit');
        } else {
          claims = Array.from({ length: CLAIMERS }, (_, index) => claim(index));
        }
        const claimed = (await Promise.all(claims)).flatMap((rows) => rows);
        const ids = claimed.map((run) => run.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort()).toEqual(runs.map((run) => run.id).sort());
        // Each run's row names the claimer that got it, under epoch 2, resumed once.
        const stored = await findRunsByIds(db, ids);
        const owners = Object.fromEntries(claimed.map((run) => [run.id, run.lease_owner]));
        for (const run of stored) expect(run).toMatchObject({ lease_owner: owners[run.id], lease_epoch: 2, resume_count: 1 });
      } finally {
        await blocker?.end();
        if (handle !== opened.handle) await handle.close();
      }
    }, 30_000);
  });

  describe('renewals, checkpoints and settlement under an epoch', () => {
    it('should renew only the (run, epoch) pairs this owner holds; a run taken over comes back lost, a cancelled one cancelled', async () => {
      const [held, takenOver, cancelled, notListed, staleEpoch] = await Promise.all(Array.from({ length: 5 }, () => leasedRun('instance-a')));
      await moveOn(takenOver!.id);
      await db.updateTable('runs').set({ lease_epoch: 2 }).where('id', '=', staleEpoch!.id).execute();
      await db.updateTable('runs').set({ cancel_requested_at: sql<Date>`now()` }).where('id', '=', cancelled!.id).execute();
      // Another owner's run under the same epoch number: the owner is checked too, not only the epoch.
      const foreign = await leasedRun('instance-b');
      const all = [held!, takenOver!, cancelled!, notListed!, staleEpoch!, foreign].map((run) => run.id);
      await db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() - interval '1 second'` }).where('id', 'in', all).execute();

      const result = await renewLeases(
        db,
        'instance-a',
        [held!, takenOver!, cancelled!, staleEpoch!, foreign].map((run) => ({ runId: run.id, epoch: 1 })),
        LEASE_MS,
      );
      expect(result.cancelled).toEqual([cancelled!.id]);
      expect([...result.lost].sort()).toEqual([takenOver!.id, staleEpoch!.id, foreign.id].sort());
      const expiry = async (runId: string) => (await runOf(runId)).lease_expires_at!.getTime();
      for (const renewed of [held!, cancelled!]) expect(await expiry(renewed.id)).toBeGreaterThan(Date.now() + LEASE_MS / 2);
      for (const other of [takenOver!, notListed!, staleEpoch!, foreign]) expect(await expiry(other.id)).toBeLessThan(Date.now());
      expect(await renewLeases(db, 'instance-a', [], LEASE_MS)).toEqual({ cancelled: [], lost: [] });
    });

    it('should store a checkpoint only under the current epoch', async () => {
      const run = await leasedRun();
      await moveOn(run.id);
      expect(await storeCheckpoint(db, { runId: run.id, epoch: 1 }, 'sealed-by-the-paused-one')).toBe(false);
      expect((await runOf(run.id)).checkpoint).toBe('sealed-start');
      expect(await storeCheckpoint(db, { runId: run.id, epoch: 2 }, 'sealed-by-the-successor')).toBe(true);
      expect((await runOf(run.id)).checkpoint).toBe('sealed-by-the-successor');
    });

    it('should settle only under the current epoch, and end the lease with it', async () => {
      const run = await leasedRun();
      await moveOn(run.id);
      expect(await settleRun(db, run.id, SETTLEMENT, 1)).toBeUndefined();
      expect(await runOf(run.id)).toMatchObject({ status: 'RUNNING', checkpoint: 'sealed-start' });
      expect(await settleRun(db, run.id, SETTLEMENT, 2)).toMatchObject({ status: 'COMPLETED', checkpoint: null, lease_owner: null, lease_expires_at: null });
      // Without an epoch (a run that is not durable) settling stays exactly-once.
      expect(await settleRun(db, run.id, SETTLEMENT)).toBeUndefined();
    });

    it('should settle without the outcome only under the current epoch, and end the lease (the sealed checkpoint goes) with it', async () => {
      const run = await leasedRun();
      await moveOn(run.id);
      const end = { status: 'FAILED', terminationReason: 'PROVIDER_FAILED', truncated: false, iterations: 0, errorMessage: 'not stored' } as const;
      expect(await settleRunWithoutOutcome(db, run.id, end, 1)).toBeUndefined();
      expect(await runOf(run.id)).toMatchObject({ status: 'RUNNING', checkpoint: 'sealed-start' });
      expect(await settleRunWithoutOutcome(db, run.id, end, 2)).toMatchObject({ status: 'FAILED', checkpoint: null, lease_owner: null, lease_expires_at: null });
    });
  });
});

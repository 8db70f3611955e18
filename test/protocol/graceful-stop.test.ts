import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp } from '../helpers/app.ts';
import { collect, RUN_AGENT, scriptedConfiguration, wsClient } from '../helpers/runs.ts';
import { eventually } from './raw-socket.ts';

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));

describe.each(TEST_DATABASES)('a graceful stop on %s', (kind) => {
  /** A run stuck in its write turn's preview (which ignores the run's signal), and a stop with a short deadline. */
  async function stopWhileStuck(extra: Record<string, string>) {
    const database = await createTestDatabase(kind, { persistent: true });
    const env = {
      AIRLOCK_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
      AIRLOCK_TOOL_MODULES: PROBES,
      AIRLOCK_RUN_HEARTBEAT_MS: '100',
      AIRLOCK_RUN_LEASE_MS: '600',
      AIRLOCK_STOP_TIMEOUT_MS: '300',
      ...extra,
    };
    const first = await startTestApp(kind, { database, keepDatabase: true, env });
    let runId: string;
    try {
      const url = (await first.app.server.start()).url;
      const configurationId = await scriptedConfiguration(first, 'stuck', {
        replies: [{ toolCalls: [{ name: 'probe_stuck_preview', arguments: {} }] }],
        allowedToolGroups: ['probes'],
      });
      const client = wsClient(url, first.adminToken);
      const events = collect(client, RUN_AGENT, { input: { configurationId, prompt: 'get stuck' } }).catch(() => []);
      // The run is stuck in the preview of its write turn once its LLM step is stored.
      for (;;) {
        const row = await first.app.services.db.selectFrom('runs').select(['id']).executeTakeFirst();
        const steps = row ? await first.app.services.db.selectFrom('run_steps').select('sequence').where('run_id', '=', row.id).execute() : [];
        if (row && steps.length >= 2) {
          runId = row.id;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      void client.dispose();
      void events;
    } finally {
      // Without the deadline this never returns: the preview ignores the run's signal.
      await first.stop();
    }
    return { first, runId: runId!, second: await startTestApp(kind, { database, env }) };
  }

  it('should end even when a run is stuck where cancellation cannot reach, leaving that run to the sweep (AIRLOCK_RESUME_RUNS=false)', async () => {
    const { first, runId, second } = await stopWhileStuck({ AIRLOCK_RESUME_RUNS: 'false' });
    expect(first.logs.text()).toContain('runs did not settle in time; the stale-heartbeat sweep will settle them INTERRUPTED');
    try {
      const run = await eventually(
        () => second.app.services.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow(),
        (row) => row.status !== 'RUNNING',
      );
      expect(run).toMatchObject({ status: 'FAILED', termination_reason: 'INTERRUPTED' });
    } finally {
      await second.stop();
    }
  });

  it('should end even when a run is stuck where no handover can reach, and the next process continues that run', async () => {
    const { first, runId, second } = await stopWhileStuck({});
    expect(first.logs.text()).toContain('runs did not stop in time; another instance continues them when their lease lapses');
    try {
      const run = await eventually(
        () => second.app.services.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow(),
        (row) => row.resume_count > 0,
      );
      expect(run).toMatchObject({ status: 'RUNNING', resume_count: 1, lease_epoch: 2 });
    } finally {
      await second.stop();
    }
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredContent } from '../../src/services/retention.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { collect, lastEvent, RUN_AGENT, scriptedConfiguration, wsClient } from '../helpers/runs.ts';

describe.each(TEST_DATABASES)('retention on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.stop());

  it('should purge stored content older than the retention period down to metadata, and leave recent runs alone', async () => {
    const { url } = await t.app.server.start();
    const configurationId = await scriptedConfiguration(t, 'kept', {
      replies: [{ content: 'calling', toolCalls: [{ name: 'describe_tables', arguments: {} }] }, { content: 'the answer' }],
      privacyLevel: 'FULL',
    });
    const client = wsClient(url, t.adminToken);
    const runIds: string[] = [];
    try {
      for (const prompt of ['old question', 'new question']) {
        const events = await collect(client, RUN_AGENT, { input: { configurationId, prompt } });
        runIds.push(Buffer.from(lastEvent(events, 'RunFinishedEvent').run.id, 'base64').toString().split(':')[1]!);
      }
    } finally {
      await client.dispose();
    }
    const [oldRun, newRun] = runIds as [string, string];
    await sql`update runs set created_at = now() - interval '40 days' where id = ${oldRun}`.execute(t.app.services.db);
    expect(await purgeExpiredContent(t.app.services.db, 30)).toBe(1);
    expect(await purgeExpiredContent(t.app.services.db, 30)).toBe(0);

    const runs = await t.app.services.db.selectFrom('runs').selectAll().where('id', 'in', runIds).execute();
    const byId = new Map(runs.map((run) => [run.id, run]));
    expect(byId.get(oldRun)).toMatchObject({ prompt: null, final_content: null, status: 'COMPLETED' });
    expect(byId.get(oldRun)!.content_purged_at).not.toBeNull();
    expect(byId.get(oldRun)!.prompt_tokens).toBeGreaterThan(0);
    expect(byId.get(newRun)).toMatchObject({ prompt: 'new question', final_content: 'the answer' });

    const steps = await t.app.services.db.selectFrom('run_steps').selectAll().where('run_id', '=', oldRun).orderBy('sequence').execute();
    expect(steps).toHaveLength(5);
    for (const step of steps) {
      const payload = step.payload as Record<string, unknown>;
      expect(payload.contentRedacted).toBe(true);
      expect(payload.content).toBeUndefined();
      expect(payload.messagesSent).toBeUndefined();
      expect(payload.toolResult).toBeUndefined();
    }
    expect((steps.find((step) => step.kind === 'TOOL')!.payload as Record<string, unknown>).toolName).toBe('describe_tables');
    const kept = await t.app.services.db.selectFrom('run_steps').selectAll().where('run_id', '=', newRun).where('kind', '=', 'LLM').execute();
    expect(kept.some((step) => (step.payload as Record<string, unknown>).content === 'the answer')).toBe(true);
  });
});

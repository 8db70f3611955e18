import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { decodeIdFor } from '../../src/global-id.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { key, samplesOf } from '../helpers/prometheus.ts';
import { collect, lastEvent, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, wsClient } from '../helpers/runs.ts';

const ECHO = fileURLToPath(new URL('../fixtures/tool-modules/echo.ts', import.meta.url));
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

const SET_BUDGET = graphql(`
  mutation MetricsSetBudget($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }
`);
const APPROVE = graphql(`
  mutation MetricsApprove($id: ID!, $digest: String!) { approveRun(id: $id, turnDigest: $digest, approved: false) { __typename } }
`);
const RUN_STATUS = graphql(`
  query MetricsRunStatus($id: ID!) { run(id: $id) { status } }
`);

describe.each(TEST_DATABASES)('Prometheus metrics and readiness on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let url: string;

  const scrape = async () => {
    const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return samplesOf(await response.text());
  };
  /** How much each listed sample moved between two scrapes (absent = 0). */
  const moved = (before: Map<string, number>, after: Map<string, number>, name: string, labels: Record<string, string> = {}) =>
    (after.get(key(name, labels)) ?? 0) - (before.get(key(name, labels)) ?? 0);

  async function run(configurationId: string, prompt = 'Go') {
    const client = wsClient(url, t.adminToken);
    try {
      return await collect(client, RUN_AGENT, { input: { configurationId, prompt } });
    } finally {
      await client.dispose();
    }
  }

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_METRICS_TOKEN: METRICS_TOKEN, AIRLOCK_TOOL_MODULES: ECHO } });
    url = (await t.app.server.start()).url;
    base = url.replace(/\/graphql$/, '');
  });
  afterAll(() => t.stop());

  it('should refuse /metrics without the token, and never reflect it', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-metrics-token' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('not-the-metrics-token');
    expect((await fetch(`${base}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(405);
  });

  it('should move the run, provider, token, cost, tool and writer counters by exactly what the runs did', async () => {
    const tools = await scriptedConfiguration(t, 'metered-tools', {
      allowedToolGroups: ['echo'],
      replies: [
        {
          content: '',
          toolCalls: [
            { name: 'echo_text', arguments: { text: 'one' } },
            { name: 'ghost_tool', arguments: {} },
            { name: 'echo_text', arguments: { wrong: 1 } },
          ],
        },
        { content: 'Done.' },
      ],
    });
    const budgeted = await scriptedConfiguration(t, 'metered-budget', {
      allowedToolGroups: ['echo'],
      replies: [{ content: '', toolCalls: [{ name: 'echo_text', arguments: { text: 'two' } }] }, { content: 'never' }],
    });
    expect((await t.gql(SET_BUDGET, { input: { subjectId: budgeted, period: 'DAILY', maxRequests: 1 } })).data?.setBudget.__typename).toBe('Budget');
    const [toolsId, budgetedId] = [decodeIdFor('Configuration', tools), decodeIdFor('Configuration', budgeted)];

    const before = await scrape();
    const first = lastEvent(await run(tools), 'RunFinishedEvent').run;
    const second = lastEvent(await run(budgeted), 'RunFinishedEvent').run;
    const after = await scrape();

    expect([first.status, first.terminationReason, second.status, second.terminationReason]).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'BUDGET_EXHAUSTED']);
    expect(moved(before, after, 'airlock_runs_started_total', { configuration: toolsId })).toBe(1);
    expect(moved(before, after, 'airlock_runs_started_total', { configuration: budgetedId })).toBe(1);
    expect(moved(before, after, 'airlock_runs_finished_total', { status: 'COMPLETED', reason: 'COMPLETED' })).toBe(1);
    expect(moved(before, after, 'airlock_runs_finished_total', { status: 'COMPLETED', reason: 'BUDGET_EXHAUSTED' })).toBe(1);
    expect(moved(before, after, 'airlock_run_duration_seconds_count', { status: 'COMPLETED' })).toBe(2);
    expect(moved(before, after, 'airlock_provider_call_duration_seconds_count', { provider: 'scripted', outcome: 'ok' })).toBe(3);
    expect(moved(before, after, 'airlock_budget_denials_total', { scope: 'CONFIGURATION', period: 'DAILY', exceeded: 'requests' })).toBe(1);
    // Offered by the two calls of the first run and the one call of the second that the budget allowed.
    expect(moved(before, after, 'airlock_tool_offers_total', { tool: 'echo_text' })).toBe(3);
    expect(moved(before, after, 'airlock_tool_offers_total', { tool: 'echo_write' })).toBe(3);
    expect(moved(before, after, 'airlock_tool_calls_total', { tool: 'echo_text', decision: 'ok' })).toBe(2);
    expect(moved(before, after, 'airlock_tool_calls_total', { tool: '(unregistered)', decision: 'notRegistered' })).toBe(1);
    expect(moved(before, after, 'airlock_tool_calls_total', { tool: 'echo_text', decision: 'invalidArguments' })).toBe(1);
    for (const [id, usage] of [[toolsId, first.usage], [budgetedId, second.usage]] as const) {
      expect(moved(before, after, 'airlock_tokens_total', { configuration: id, direction: 'input' })).toBe(usage.promptTokens);
      expect(moved(before, after, 'airlock_tokens_total', { configuration: id, direction: 'output' })).toBe(usage.completionTokens);
      expect(moved(before, after, 'airlock_cost_total', { configuration: id })).toBeCloseTo(usage.estimatedCost, 12);
    }
    expect(moved(before, after, 'airlock_run_writer_batch_rows_count')).toBeGreaterThan(0);
    expect(moved(before, after, 'airlock_run_writer_batch_rows_sum')).toBeGreaterThanOrEqual(12); // 7 + 5 steps at least
    expect(moved(before, after, 'airlock_run_writer_commit_seconds_count')).toBe(moved(before, after, 'airlock_run_writer_batch_rows_count'));
    // Node's default process metrics, under the same prefix.
    expect(after.has('airlock_process_cpu_user_seconds_total')).toBe(true);
    expect(after.has('airlock_nodejs_heap_size_used_bytes')).toBe(true);
    // Bounded labels: no user id, no prompt, no made-up tool name.
    const labels = [...after.keys()].join('\n');
    expect(labels).not.toContain('ghost_tool');
    expect(labels).not.toContain(decodeIdFor('User', (await t.gql('{ viewer { id } }')).data.viewer.id));
  });

  it('should count approvals waiting and open subscriptions by transport while they last', async () => {
    const writer = await scriptedConfiguration(t, 'metered-approval', {
      allowedToolGroups: ['echo'],
      replies: [{ content: '', toolCalls: [{ name: 'echo_write', arguments: { text: 'x' } }] }, { content: 'Done.' }],
    });
    const before = await scrape();
    const suspended = lastEvent(await run(writer), 'RunSuspendedEvent');
    const waiting = await scrape();
    expect(moved(before, waiting, 'airlock_approvals_waiting')).toBe(1);
    expect(moved(before, waiting, 'airlock_approval_events_total', { event: 'waiting' })).toBe(1);

    // A watcher of the waiting run holds one websocket subscription open.
    const client = wsClient(url, t.adminToken);
    const ended = collect(client, RUN_EVENTS, { runId: suspended.run.id });
    for (;;) {
      if (moved(before, await scrape(), 'airlock_subscriptions_open', { transport: 'ws' }) === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest })).data?.approveRun.__typename).toBe('Run');
    expect(lastEvent(await ended, 'RunFinishedEvent').run.terminationReason).toBe('APPROVAL_DENIED');
    await client.dispose();
    while ((await t.gql(RUN_STATUS, { id: suspended.run.id })).data?.run?.status !== 'COMPLETED') await new Promise((resolve) => setTimeout(resolve, 20));
    let after = await scrape();
    while (moved(before, after, 'airlock_subscriptions_open', { transport: 'ws' }) !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape();
    }
    expect(moved(before, after, 'airlock_approvals_waiting')).toBe(0);
    expect(moved(before, after, 'airlock_approval_events_total', { event: 'decided' })).toBe(1);
    expect(moved(before, after, 'airlock_tool_calls_total', { tool: 'echo_write', decision: 'deniedByOperator' })).toBe(1);
    expect(moved(before, after, 'airlock_runs_finished_total', { status: 'COMPLETED', reason: 'APPROVAL_DENIED' })).toBe(1);
  });

  it('should count a server-sent-events subscription under its transport until the client leaves', async () => {
    const writer = await scriptedConfiguration(t, 'metered-sse', {
      allowedToolGroups: ['echo'],
      replies: [{ content: '', toolCalls: [{ name: 'echo_write', arguments: { text: 'y' } }] }, { content: 'Done.' }],
    });
    const suspended = lastEvent(await run(writer), 'RunSuspendedEvent');
    const before = await scrape();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: textOf(RUN_EVENTS), variables: { runId: suspended.run.id } }),
    });
    const reader = response.body!.getReader();
    await reader.read(); // the replayed steps: the stream is open
    expect(moved(before, await scrape(), 'airlock_subscriptions_open', { transport: 'sse' })).toBe(1);
    expect(moved(before, await scrape(), 'airlock_subscriptions_open', { transport: 'ws' })).toBe(0);
    await reader.cancel();
    let after = await scrape();
    while (moved(before, after, 'airlock_subscriptions_open', { transport: 'sse' }) !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape();
    }
    expect(moved(before, after, 'airlock_subscriptions_open', { transport: 'sse' })).toBe(0);
  });
});

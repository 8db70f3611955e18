import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectNoSeriousAxeViolation, signIn, watchedPage, type WatchedPage } from './console-page.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp } from '../mcp/helpers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { CHROMIUM, launchChromium, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { insertRun } from '../../src/db/repositories/runs.ts';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { UNKNOWN_ARTIFACT, XSS } from '../fixtures/tool-modules/console.ts';

const CONSOLE_TOOLS = fileURLToPath(new URL('../fixtures/tool-modules/console.ts', import.meta.url));

/** Names are at most 100 characters: the configuration carries the shortest payloads. */
const NAME_XSS = '<img src=x onerror=window.__pwned=1><svg onload=alert(1)>';

const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id status } ... on Error { message } } }`;

/**
 * Chooses `configurationId` in the Playground the moment its option appears, in the same task as
 * the render that added it: before the page's effects run. Opens the Playground from the runs
 * page (a same-document navigation, so the observer stays).
 */
async function chooseOnArrival(page: Page, base: string, configurationId: string): Promise<void> {
  await page.goto(`${base}/dashboard#/runs`);
  await page.locator('main h1').waitFor();
  await page.evaluate((id) => {
    const observer = new MutationObserver(() => {
      const select = document.querySelector<HTMLSelectElement>('#configuration');
      if (!select?.querySelector(`option[value="${CSS.escape(id)}"]`)) return;
      observer.disconnect();
      select.value = id;
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    observer.observe(document.body, { childList: true, subtree: true });
    location.hash = '#/playground';
  }, configurationId);
}

/** Appends UNKNOWN_ARTIFACT to the stored artifacts of the run's TOOL step. */
async function appendUnknownArtifact(t: TestApp, runGlobalId: string): Promise<void> {
  const { id } = decodeGlobalID(runGlobalId);
  const db = t.app.services.db;
  const step = await db.selectFrom('run_steps').select(['sequence', 'payload']).where('run_id', '=', id).where('kind', '=', 'TOOL').executeTakeFirstOrThrow();
  const payload = (typeof step.payload === 'string' ? JSON.parse(step.payload) : step.payload) as { toolArtifacts?: unknown[] };
  payload.toolArtifacts = [...(payload.toolArtifacts ?? []), UNKNOWN_ARTIFACT];
  await db
    .updateTable('run_steps')
    .set({ payload: JSON.stringify(payload) })
    .where('run_id', '=', id)
    .where('sequence', '=', step.sequence)
    .execute();
}

async function pwned(page: Page): Promise<unknown> {
  return page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned);
}

describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the console in Chromium on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let admin: WatchedPage;
  let adminContext: BrowserContext;
  const configurations: Record<string, string> = {};
  let bobToken: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: CONSOLE_TOOLS } });
    const { url } = await t.app.server.start();
    base = url.replace(/\/graphql$/, '');
    configurations.report = await scriptedConfiguration(t, `report ${NAME_XSS}`, {
      privacyLevel: 'FULL',
      delayMs: 600,
      replies: [{ content: `answer ${XSS}`, toolCalls: [{ name: 'console_report', arguments: {} }] }, { content: `final ${XSS}`, toolCalls: [] }],
    });
    configurations.approve = await scriptedConfiguration(t, 'approve', {
      privacyLevel: 'FULL',
      replies: [{ content: 'writing', toolCalls: [{ name: 'console_note', arguments: { text: 'hello' } }] }, { content: 'written', toolCalls: [] }],
    });
    configurations.quiet = await scriptedConfiguration(t, 'quiet', { privacyLevel: 'METADATA', replies: [{ content: 'secret answer', toolCalls: [] }] });
    configurations.bulk = await scriptedConfiguration(t, 'bulk', { delayMs: 300, replies: [{ content: 'ok', toolCalls: [] }] });
    const bob = await t.gql(`mutation { createUser(input: { name: "bob" }) { ... on CreateUserPayload { token } } }`);
    bobToken = bob.data.createUser.token;
    browser = await launchChromium();
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    admin = await watchedPage(adminContext);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('(1, 2) signs in, starts a run from the playground with a group ticked, shows its steps live and every artifact member, all markup as text', async () => {
    const { page } = admin;
    await signIn(page, base, t.adminToken);
    expect(await page.evaluate(() => location.href)).not.toContain(t.adminToken);
    // A choice made before the page's first effects must stand (the default-to-first effect ran
    // with the render's stale choice and undid it: a reload then restored another configuration).
    await chooseOnArrival(page, base, configurations.report!);
    await expect.poll(() => page.locator('#configuration').inputValue()).toBe(configurations.report);
    const group = page.locator('#group-console');
    await group.waitFor();
    // console_off is switched off: shown unticked and disabled, with the reason.
    await expect.poll(() => page.locator('#tool-console_off').isDisabled()).toBe(true);
    expect(await page.locator('#tool-console_off-reason').textContent()).toMatch(/Not offered/);
    // The configuration's offered tools start ticked. A click on the partly ticked group unticks
    // it; a second ticks its offered tools, which leaves it mixed (not checked): clicks, not check().
    await expect.poll(() => page.locator('#tool-console_report').isChecked()).toBe(true);
    await group.click();
    await expect.poll(() => page.locator('#tool-console_report').isChecked()).toBe(false);
    await group.click();
    await expect.poll(() => page.locator('#tool-console_report').isChecked()).toBe(true);
    // Only some of the group is offered: the group checkbox is "mixed".
    expect(await group.evaluate((el) => (el as HTMLInputElement).indeterminate)).toBe(true);
    await page.locator('#prompt').fill(`prompt ${XSS}`);
    // The choices survive a reload (once the page has saved them).
    await expect.poll(() => page.evaluate(() => sessionStorage.getItem('airlock.playground') ?? '')).toContain('prompt <img');
    await page.reload();
    await expect.poll(() => page.locator('#prompt').inputValue()).toBe(`prompt ${XSS}`);
    await expect.poll(() => page.locator('#tool-console_report').isChecked()).toBe(true);
    // Restored like the rest, once the configurations have loaded (read once, it raced the load on a busy CI machine).
    await expect.poll(() => page.locator('#configuration').inputValue()).toBe(configurations.report);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'playground.png'), fullPage: true });

    await page.locator('#start-run').click();
    await page.waitForURL(/#\/runs\/.+/);
    // Steps stream in while the run runs (proved at a gate, where timing cannot race it, by
    // console-inspector.test.ts's live summary); here the run's end.
    await page.locator('.step').first().waitFor();
    await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 30_000 });
    await page.locator('.step-tool').waitFor();

    const tool = page.locator('.step-tool');
    expect(await tool.locator('.tool-result').textContent()).toBe(`report for the model ${XSS}`);
    expect(await tool.locator('.table-artifact td').allTextContents()).toEqual(['cell', XSS, 'second', 'plain']);
    expect(await tool.locator('.table-artifact th').allTextContents()).toEqual(['name', XSS]);
    expect(await tool.locator('.text-artifact pre').textContent()).toBe(`text artifact ${XSS}`);
    expect(await page.locator('.step-llm .content').first().textContent()).toBe(`answer ${XSS}`);
    expect(await page.locator('#run-prompt').textContent()).toBe(`prompt ${XSS}`);
    expect(await page.locator('#run-usage').textContent()).toMatch(/tokens/);
    // The REQUEST steps show the messages sent, one per turn, as text (FULL): the second round's
    // carries the user's prompt, the assistant's turn with its call and the tool's answer.
    const requests = page.locator('.step-request');
    expect(await requests.count()).toBe(2);
    expect(await requests.nth(0).locator('.message').evaluateAll((items) => items.map((item) => item.getAttribute('data-role')))).toEqual(['user']);
    expect(await requests.nth(0).locator('.message-user .message-content').textContent()).toBe(`prompt ${XSS}`);
    expect(await requests.nth(1).locator('.message').evaluateAll((items) => items.map((item) => item.getAttribute('data-role')))).toEqual(['user', 'assistant', 'tool']);
    expect(await requests.nth(1).locator('.message-tool .message-content').textContent()).toBe(`report for the model ${XSS}`);
    expect(await page.locator('.hidden-note').count()).toBe(0);
    // The final answer made no calls: nothing says calls were requested.
    expect(await page.locator('.step-llm').last().textContent()).not.toContain('Tool calls requested');

    // A stored step holding an artifact of a type this version does not know (as another version
    // could have written it): the replay shows it as JSON, never drops it.
    const runId = decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
    await appendUnknownArtifact(t, runId);
    await page.reload();
    await page.locator('.unknown-artifact').waitFor();
    expect(await tool.locator('.table-artifact td').allTextContents()).toEqual(['cell', XSS, 'second', 'plain']);
    expect(await tool.locator('.unknown-artifact figcaption').textContent()).toContain('type chart');
    expect(JSON.parse((await tool.locator('.unknown-artifact pre').textContent())!)).toEqual(UNKNOWN_ARTIFACT.data);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'inspector.png'), fullPage: true });

    // The runs list shows the prompt and the configuration name as text too.
    await page.goto(`${base}/dashboard#/runs`);
    await page.locator('#runs-table').waitFor();
    expect(await page.locator('#runs-table').textContent()).toContain(`prompt ${XSS}`);
    // The filter's options come from their own query, which may answer after the table's.
    await expect.poll(() => page.locator('#filter-configuration').textContent()).toContain(`report ${NAME_XSS}`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'runs.png'), fullPage: true });
  }, 60_000);

  it('(2) no payload runs, in a context without CSP as well: text nodes only', async () => {
    // With CSP bypassed, only the rendering (text nodes) stands between the payloads and the page.
    const context = await browser.newContext({ bypassCSP: true });
    try {
      const bare = await watchedPage(context);
      await signIn(bare.page, base, t.adminToken);
      const runs = await t.gql(`{ runs(filter: { configurationId: "${configurations.report}" }) { edges { node { id } } } }`);
      const id = runs.data.runs.edges[0].node.id as string;
      for (const hash of [`#/runs/${id}`, '#/runs', '#/playground', '#/admin']) {
        await bare.page.goto(`${base}/dashboard${hash}`);
        await bare.page.locator('main h1').waitFor();
        await bare.page.waitForLoadState('networkidle');
        if (hash.startsWith('#/runs/')) await bare.page.locator('.unknown-artifact').waitFor();
        if (hash === '#/admin') await bare.page.locator('#usage-section').waitFor();
        for (const page of [bare.page, admin.page]) {
          expect(await pwned(page), hash).toBeUndefined();
          expect(await page.locator('main img, main script, main svg, main iframe, a[href^="javascript:"]').count(), hash).toBe(0);
        }
      }
      expect(bare.problems).toEqual([]);
    } finally {
      await context.close();
    }
    expect(admin.problems).toEqual([]);
  }, 60_000);

  it('(3) an approval decided from the queue resumes the run; a non-admin sees only their own runs, filtered', async () => {
    const { page } = admin;
    const started = await t.gql(START_RUN, { input: { configurationId: configurations.approve, prompt: 'write a note', tools: ['console_note'] } });
    const runId = started.data.startRun.id as string;
    await page.goto(`${base}/dashboard#/approvals`);
    const entry = page.locator(`li[data-run-id="${runId}"]`);
    await entry.waitFor({ timeout: 15_000 });
    expect(await entry.locator('.preview').textContent()).toBe('will write the note: hello');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'approvals.png'), fullPage: true });
    await entry.getByRole('button', { name: 'Approve' }).click();
    await page.getByText(/Approved: the run resumes/).waitFor();
    await page.goto(`${base}/dashboard#/runs/${encodeURIComponent(runId)}`);
    await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('.step-approval').textContent()).toMatch(/Approved by/);
    expect(await page.locator('.step-tool .tool-result').textContent()).toBe('noted: hello');

    // bob, a non-admin, in a second context.
    const bobRun = await t.gql(START_RUN, { input: { configurationId: configurations.quiet, prompt: 'bob prompt' } }, bobToken);
    const bobRunId = bobRun.data.startRun.id as string;
    const bobContext = await browser.newContext();
    try {
      const bob = await watchedPage(bobContext);
      await signIn(bob.page, base, bobToken);
      expect(await bob.page.locator('nav[aria-label="Console"]').textContent()).not.toContain('Admin');
      await bob.page.locator('#runs-table').waitFor();
      await expect.poll(() => bob.page.locator('#runs-table tbody tr').count()).toBe(1);
      expect(await bob.page.locator('#runs-table tbody tr').getAttribute('data-run-id')).toBe(bobRunId);
      expect(await bob.page.locator('#filter-user').count()).toBe(0);
      await bob.page.goto(`${base}/dashboard#/runs/${encodeURIComponent(bobRunId)}`);
      await bob.page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
      expect(await bob.page.locator('#privacy-note').textContent()).toMatch(/METADATA/);
      await bob.page.locator('.step-llm').waitFor();
      expect(await bob.page.locator('.step-llm').textContent()).not.toContain('secret answer');
      expect(await bob.page.locator('.step-llm .hidden-note').textContent()).toMatch(/not shown \(privacy level METADATA\)/);
      expect(await bob.page.locator('.step-request .hidden-note').textContent()).toBe('Messages sent (1) not shown (privacy level METADATA).');
      // The admin's run is not visible to bob.
      await bob.page.goto(`${base}/dashboard#/runs/${encodeURIComponent(runId)}`);
      await bob.page.getByText(/No run with this id is visible to you/).waitFor();
      expect(bob.problems).toEqual([]);
    } finally {
      await bobContext.close();
    }
  }, 60_000);

  it('(4) the live list follows 50 concurrent runs without a reload (reports the p95 of status change → row)', async () => {
    const { page } = admin;
    await page.goto(`${base}/dashboard#/runs`);
    await page.locator('#filter-configuration').selectOption(configurations.bulk!);
    await page.locator('#runs-empty').waitFor();
    await page.evaluate(() => {
      const seen: Record<string, number> = {};
      (window as unknown as { __completedAt: Record<string, number> }).__completedAt = seen;
      const record = () => {
        for (const cell of document.querySelectorAll('tr[data-run-id] td.status[data-status="COMPLETED"]')) {
          const id = cell.parentElement!.getAttribute('data-run-id')!;
          seen[id] ??= Date.now();
        }
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
    });
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    const ids = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const result = await t.gql(START_RUN, { input: { configurationId: configurations.bulk, prompt: `bulk ${i}` } });
        expect(result.data?.startRun.__typename, JSON.stringify(result)).toBe('Run');
        return result.data.startRun.id as string;
      }),
    );
    await expect.poll(() => page.locator('td.status[data-status="COMPLETED"]').count(), { timeout: 30_000 }).toBe(50);
    expect(navigations.filter((url) => !url.includes('#'))).toEqual([]);
    const seen = await page.evaluate(() => (window as unknown as { __completedAt: Record<string, number> }).__completedAt);
    const runs = await t.gql(`query($f: RunFilter) { runs(filter: $f, first: 100) { totalCount edges { node { id finishedAt } } } }`, { f: { configurationId: configurations.bulk } });
    expect(runs.data.runs.totalCount).toBe(50);
    const lags = runs.data.runs.edges.map((edge: { node: { id: string; finishedAt: string } }) => seen[edge.node.id]! - Date.parse(edge.node.finishedAt)).sort((a: number, b: number) => a - b);
    expect(lags).toHaveLength(ids.length);
    const p95 = lags[Math.ceil(lags.length * 0.95) - 1];
    console.log(`[console ${kind}] list update after a run finished, 50 concurrent runs: p50 ${lags[Math.floor(lags.length / 2)]} ms, p95 ${p95} ms, max ${lags.at(-1)} ms`);
    expect(await page.locator('#runs-total').textContent()).toMatch(/^50 runs/);
    // The page stays responsive: it answers an evaluation at once after the burst.
    expect(await page.evaluate(() => 1 + 1)).toBe(2);
  }, 60_000);

  it('(5) axe finds no serious or critical violation on any page', async () => {
    const context = await browser.newContext({ bypassCSP: true });
    try {
      const { page } = await watchedPage(context);
      await page.goto(`${base}/dashboard`);
      await page.getByLabel('API token').waitFor();
      await expectNoSeriousAxeViolation(page, 'sign-in');
      await signIn(page, base, t.adminToken);
      const runs = await t.gql(`{ runs(filter: { configurationId: "${configurations.report}" }) { edges { node { id } } } }`);
      const pages: [string, string][] = [
        ['runs', '#/runs'],
        ['inspector', `#/runs/${encodeURIComponent(runs.data.runs.edges[0].node.id)}`],
        ['playground', '#/playground'],
        ['approvals', '#/approvals'],
        ['admin', '#/admin'],
      ];
      for (const [name, hash] of pages) {
        await page.goto(`${base}/dashboard${hash}`);
        await page.locator('main h1').waitFor();
        await page.waitForLoadState('networkidle');
        if (name === 'inspector') await page.locator('.unknown-artifact').waitFor();
        if (name === 'admin') await page.locator('#usage-table').waitFor();
        if (name === 'playground') await page.locator('#group-console').waitFor();
        await expectNoSeriousAxeViolation(page, name);
        if (name === 'admin') await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin.png'), fullPage: true });
      }
    } finally {
      await context.close();
    }
  }, 60_000);

  it('an MCP session is listed live with its kind, and inspected with one TOOL step per call', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const mcp = await connectMcp(base, t.adminToken, 'quiet');
    try {
      const { page, problems } = await watchedPage(context);
      await signIn(page, base, t.adminToken);
      await page.locator('#runs-table').waitFor();
      expect((await mcp.client.callTool({ name: 'describe_tables', arguments: {} })).isError).toBe(false);
      const row = page.locator('#runs-table tbody tr', { has: page.locator('.badge.kind') }).first();
      await row.waitFor({ timeout: 15_000 });
      expect(await row.locator('.badge.kind').textContent()).toBe('MCP');
      expect(await row.locator('.prompt').textContent()).toBe('(MCP session)');
      await row.getByRole('link', { name: 'Inspect' }).click();
      await page.locator('#run-kind').waitFor();
      expect(await page.locator('#run-kind').textContent()).toMatch(/MCP session/);
      await page.locator('.step-tool').waitFor();
      expect(await page.locator('.step-tool').count()).toBe(1);
      expect(await page.locator('#run-prompt').count()).toBe(0);
      await mcp.close();
      await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
      expect(problems).toEqual([]);
    } finally {
      await mcp.close();
      await context.close();
    }
  }, 60_000);

  it('a write interrupted by its server’s death is shown as of unknown outcome, not as a plain error', async () => {
    const runId = randomUUID();
    await insertRun(t.app.services.db, { id: runId, configuration_id: null, user_id: null, status: 'COMPLETED', prompt: null, privacy_level: 'FULL', tool_selection: null });
    const interrupted = 'Error: tool "console_note" was interrupted: outcome unknown. Check before trying again.';
    await t.app.services.db
      .insertInto('run_steps')
      .values({
        run_id: runId,
        sequence: 1,
        kind: 'TOOL',
        round: 1,
        duration_ms: 0,
        payload: JSON.stringify({ kind: 'TOOL', round: 1, durationMs: 0, toolName: 'console_note', toolCallId: 'call_0_0', toolResult: interrupted, toolIsError: true, outcomeUnknown: true, contentRedacted: false }),
        epoch: null,
      })
      .execute();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const { page } = await watchedPage(context);
      await signIn(page, base, t.adminToken);
      await page.goto(`${base}/dashboard#/runs/${encodeURIComponent(Buffer.from(`Run:${runId}`).toString('base64'))}`);
      const step = page.locator('.step-tool');
      await step.waitFor();
      expect(await step.textContent()).toMatch(/outcome unknown: it was running when its server stopped, and was not run again/);
      expect(await step.textContent()).not.toMatch(/returned an error/);
      expect(await step.locator('.tool-result').textContent()).toBe(interrupted);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a revoked token returns to sign-in with a clear message', async () => {
    const created = await t.gql(`mutation { createUser(input: { name: "carol" }) { ... on CreateUserPayload { token user { id } } } }`);
    const context = await browser.newContext();
    try {
      const { page } = await watchedPage(context);
      await page.goto(`${base}/dashboard`);
      await page.getByLabel('API token').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#signin-error').waitFor();
      expect(await page.locator('#signin-error').textContent()).toMatch(/refused this token/);
      await signIn(page, base, created.data.createUser.token);
      await t.gql(`mutation($id: ID!) { setUserActive(userId: $id, active: false) { __typename } }`, { id: created.data.createUser.user.id });
      await page.locator('#signin-error').waitFor({ timeout: 15_000 });
      expect(await page.locator('#signin-error').textContent()).toMatch(/refused this token/);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);
});

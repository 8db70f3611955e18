import { decodeGlobalID } from '@pothos/plugin-relay';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { signIn, watchedPage, type WatchedPage } from './console-page.ts';

const RUNS = `query($f: RunFilter) { runs(filter: $f, first: 10) { totalCount edges { node { id status } } } }`;
const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }`;

/**
 * The Playground ticks a configuration's offered tools when it is chosen (a tab's own ticks for
 * it win after a reload), asks for a second click before a run with no tools, and the runs list
 * names runs by a short id.
 */
describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the playground and the runs list in Chromium on %s', (kind) => {
  let served: ServedApp<'narrow' | 'wide'>;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let watched: WatchedPage;
  const failedRequests: string[] = [];

  beforeAll(async () => {
    // "narrow" offers the content group only; "wide" every group (no restriction).
    served = await startServedApp(kind, {
      narrow: { allowedToolGroups: ['content'], privacyLevel: 'FULL', replies: [{ content: 'narrow answer', toolCalls: [] }] },
      wide: { privacyLevel: 'FULL', replies: [{ content: 'wide answer', toolCalls: [] }] },
    });
    base = served.url.replace(/\/graphql$/, '');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    watched = await watchedPage(context);
    watched.page.on('requestfailed', (request) => failedRequests.push(`${request.url()} ${request.failure()?.errorText}`));
    watched.page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.url()} ${response.status()}`);
    });
    await signIn(watched.page, base, served.t.adminToken);
  });

  afterAll(async () => {
    // The server first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    await served?.t.stop();
    await context?.close();
    await browser?.close();
  });

  const checked = (page: Page, tool: string) => page.locator(`#tool-${tool}`).isChecked();

  it('should tick the offered tools of the configuration chosen, and keep the tab’s own ticks across a reload', async () => {
    const { page } = watched;
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    const configuration = page.getByLabel('Configuration', { exact: true });
    await configuration.selectOption(served.configurations.wide);
    await expect.poll(() => checked(page, 'describe_tables')).toBe(true);
    expect(await checked(page, 'read_records')).toBe(true);

    await configuration.selectOption(served.configurations.narrow);
    // Only the content group is offered: read_records ticked, describe_tables refused and unticked.
    await expect.poll(() => page.locator('#tool-describe_tables').isDisabled()).toBe(true);
    await expect.poll(() => checked(page, 'read_records')).toBe(true);
    expect(await checked(page, 'describe_tables')).toBe(false);

    // Back on "wide" after unticking one: a newly chosen configuration gets its offered tools again.
    await configuration.selectOption(served.configurations.wide);
    await expect.poll(() => checked(page, 'describe_tables')).toBe(true);
    await page.locator('#tool-describe_tables').uncheck();
    // A reload restores this tab's ticks for the same configuration, the untick included.
    await expect.poll(() => page.evaluate(() => sessionStorage.getItem('airlock.playground') ?? '')).toMatch(/"ticks":\[[^\]]*read_records/);
    await page.reload();
    await expect.poll(() => checked(page, 'read_records')).toBe(true);
    expect(await configuration.inputValue()).toBe(served.configurations.wide);
    expect(await checked(page, 'describe_tables')).toBe(false);
    expect(watched.problems).toEqual([]);
  }, 60_000);

  it('should warn before a run with no tools and start it only on "Start without tools"', async () => {
    const { page } = watched;
    await page.goto(`${base}/dashboard#/playground`);
    const configuration = page.getByLabel('Configuration', { exact: true });
    await configuration.selectOption(served.configurations.narrow);
    await expect.poll(() => checked(page, 'read_records')).toBe(true);
    await page.locator('#tool-read_records').uncheck();
    await page.getByLabel('Prompt').fill('answer without tools');

    await page.getByRole('button', { name: 'Start run' }).click();
    const warning = page.getByRole('alert').filter({ hasText: 'This run offers the model no tools' });
    await warning.waitFor();
    // The warning is the click's whole effect: no run was started, the page stays.
    expect(page.url()).toMatch(/#\/playground$/);
    expect((await served.t.gql(RUNS, { f: { configurationId: served.configurations.narrow } })).data.runs.totalCount).toBe(0);

    // Ticking a tool answers the warning; unticking it again asks again.
    await page.locator('#tool-read_records').check();
    await expect.poll(() => warning.count()).toBe(0);
    await page.locator('#tool-read_records').uncheck();
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByRole('button', { name: 'Start without tools' }).click();
    await page.waitForURL(/#\/runs\/.+/);
    await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('#run-final').textContent()).toContain('narrow answer');
    const runs = await served.t.gql(RUNS, { f: { configurationId: served.configurations.narrow } });
    expect(runs.data.runs.totalCount).toBe(1);
    expect(watched.problems).toEqual([]);
  }, 60_000);

  it('should name each run of the runs list by the first 8 characters of its uuid', async () => {
    const { page } = watched;
    const started = await served.t.gql(START_RUN, { input: { configurationId: served.configurations.wide, prompt: 'listed run' } });
    expect(started.data.startRun.__typename, JSON.stringify(started)).toBe('Run');
    const id: string = started.data.startRun.id;
    const short = decodeGlobalID(id).id.slice(0, 8);
    expect(short).toMatch(/^[0-9a-f]{8}$/);

    await page.goto(`${base}/dashboard#/runs`);
    const row = page.locator(`#runs-table tbody tr[data-run-id="${id}"]`);
    await row.waitFor();
    const link = row.getByRole('link', { name: `Inspect run ${short}`, exact: true });
    // Seen: "Run 1a2b3c4d"; the base64 global id appears nowhere in the row's text.
    expect(await link.textContent()).toBe(`Run ${short}`);
    expect(await row.textContent()).not.toContain(id);
    await link.click();
    await page.waitForURL(new RegExp(`#/runs/${encodeURIComponent(id)}$`));
    await page.locator('#run-status').waitFor();
    expect(watched.problems).toEqual([]);
    expect(failedRequests).toEqual([]);
  }, 60_000);
});

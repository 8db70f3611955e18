import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { expectNoSeriousAxeViolation, signIn, watchedPage } from './console-page.ts';

/**
 * From `npm start` to a first run in the browser: on a database with no configuration, an admin
 * clicks "Create demo configuration" (Runs or Playground), lands in the Playground on it, clicks
 * "Start run" and reads the answer. Nothing but the console: no curl, no GraphiQL.
 */
/** Each test starts an app on a new database (an empty one is what it tests): on a loaded machine a PGlite start alone took over a minute. */
const FRESH_APP_TEST_MS = 240_000;

describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the console from an empty database on %s', (kind) => {
  let browser: Browser;
  const started: ServedApp<never>[] = [];
  const contexts: BrowserContext[] = [];

  /** A fresh server on an empty database, and a page signed in as its admin. */
  async function freshConsole(options: { bypassCSP?: boolean; width?: number } = {}) {
    const served = await startServedApp(kind);
    started.push(served);
    const base = served.url.replace(/\/graphql$/, '');
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, bypassCSP: options.bypassCSP ?? false });
    contexts.push(context);
    const watched = await watchedPage(context);
    await signIn(watched.page, base, served.t.adminToken);
    return { served, base, ...watched };
  }

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    // The servers first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    for (const served of started) await served.t.stop();
    for (const context of contexts) await context.close();
    await browser?.close();
  });

  it('should go from the Playground\'s "Create demo configuration" to "Start run" and the run\'s answer', async () => {
    const { page, problems, base } = await freshConsole();
    // The Runs page offers the demo too (it is where sign-in lands).
    await page.getByRole('button', { name: 'Create demo configuration' }).waitFor();
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    const create = page.getByRole('button', { name: 'Create demo configuration' });
    await create.waitFor();
    expect(await page.getByRole('button', { name: 'Start run' }).isDisabled()).toBe(true);
    await create.click();

    // The Playground is on the demo configuration, its offered tools ticked and a prompt typed.
    const configuration = page.getByLabel('Configuration', { exact: true });
    await expect.poll(() => configuration.locator('option:checked').textContent()).toContain('demo-scripted');
    await expect.poll(() => page.locator('#tool-describe_tables').isChecked()).toBe(true);
    await expect.poll(() => page.locator('#tool-read_records').isChecked()).toBe(true);
    expect(await page.getByLabel('Prompt').inputValue()).not.toBe('');
    expect(await page.getByRole('button', { name: 'Create demo configuration' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/#\/runs\/.+/);
    await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('#run-final').textContent()).toMatch(/first three customers/);
    // Both tools ran, on the seeded records, and their output reads back (REDACTED keeps content).
    expect(await page.locator('.step-tool').count()).toBe(2);
    expect(await page.locator('.step-tool .table-artifact td').allTextContents()).toContain('Ada Lovelace');

    // With a configuration in place the demo is no longer offered.
    await page.goto(`${base}/dashboard#/runs`);
    await page.locator('#runs-table').waitFor();
    expect(await page.getByRole('button', { name: 'Create demo configuration' }).count()).toBe(0);
    expect(problems).toEqual([]);
  }, FRESH_APP_TEST_MS);

  it('should open the Playground on the demo from the Runs page, and axe finds nothing serious on either empty state', async () => {
    const { page, problems } = await freshConsole({ bypassCSP: true });
    const create = page.getByRole('button', { name: 'Create demo configuration' });
    await create.waitFor();
    await expectNoSeriousAxeViolation(page, 'runs, empty');
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    await page.getByRole('button', { name: 'Create demo configuration' }).waitFor();
    await expectNoSeriousAxeViolation(page, 'playground, empty');
    await page.getByRole('link', { name: 'Runs', exact: true }).click();

    await page.getByRole('button', { name: 'Create demo configuration' }).click();
    await page.waitForURL(/#\/playground$/);
    await expect.poll(() => page.getByLabel('Configuration', { exact: true }).locator('option:checked').textContent()).toContain('demo-scripted');
    await expect.poll(() => page.locator('#tool-read_records').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('#run-final').textContent()).toMatch(/first three customers/);
    expect(problems).toEqual([]);
  }, FRESH_APP_TEST_MS);

  it('should not offer the demo to a non-admin, who is told to ask an admin', async () => {
    const served = await startServedApp(kind);
    started.push(served);
    const user = await served.t.gql(`mutation { createUser(input: { name: "newcomer" }) { ... on CreateUserPayload { token } } }`);
    const context = await browser.newContext();
    contexts.push(context);
    const { page, problems } = await watchedPage(context);
    await signIn(page, served.url.replace(/\/graphql$/, ''), user.data.createUser.token);
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    await page.getByText(/ask an admin/).waitFor();
    expect(await page.getByRole('button', { name: 'Create demo configuration' }).count()).toBe(0);
    expect(problems).toEqual([]);
  }, FRESH_APP_TEST_MS);
});

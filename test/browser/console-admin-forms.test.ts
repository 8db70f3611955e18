import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { everythingOnPage, expectNoSeriousAxeViolation, fieldError, signIn, watchedPage, type WatchedPage } from './console-page.ts';

/**
 * The Admin page's forms, driven by the accessible names of docs/console.md: a provider, a model
 * and a configuration created, refused with the error beside its field, edited and deleted; the
 * API key never comes back to the page; a user's token shown once and good for signing in.
 */

const API_KEY = 'sk-console-canary-0123456789abcdef';
const HEADER_VALUE = 'header-canary-fedcba9876543210';

describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the Admin forms in Chromium on %s', (kind) => {
  let served: ServedApp<never>;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let admin: WatchedPage;

  beforeAll(async () => {
    served = await startServedApp(kind);
    base = served.url.replace(/\/graphql$/, '');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    admin = await watchedPage(context);
    await signIn(admin.page, base, served.t.adminToken);
  });
  afterAll(async () => {
    // The server first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    await served?.t.stop();
    await context?.close();
    await browser?.close();
  });

  const openAdmin = async (page: Page) => {
    await page.getByRole('link', { name: 'Admin', exact: true }).click();
    await page.locator('#providers-table, #providers-section .empty').first().waitFor();
  };
  /** A successful Save closes its form. */
  const saved = (page: Page) => page.getByRole('button', { name: 'Save' }).waitFor({ state: 'detached' });
  const row = (page: Page, table: string, name: string) => page.locator(`#${table} tbody tr`, { has: page.getByRole('cell', { name, exact: true }) });

  it('should create a provider, a model and a configuration through the forms, each refusal shown beside its field, and never show the API key again', async () => {
    const { page } = admin;
    await openAdmin(page);

    // Provider: a bad base URL is refused by the API, beside "Base URL".
    await page.getByRole('button', { name: 'New provider' }).click();
    await page.getByLabel('Name').fill('vendor');
    await page.getByLabel('Kind').selectOption({ label: 'OpenAI-compatible' });
    await page.getByLabel('Base URL').fill('ftp://vendor.example.test');
    expect(await page.getByLabel('API key').getAttribute('type')).toBe('password');
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1').fill('x-gateway-key');
    await page.getByLabel('Value 1').fill(HEADER_VALUE);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => fieldError(page, page.getByLabel('Base URL'))).toMatch(/http\(s\) URL/);
    expect(await fieldError(page, page.getByLabel('Name'))).toBeNull();
    // Focus moved to the field to fix.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(await page.getByLabel('Base URL').getAttribute('id'));

    await page.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
    await page.getByRole('button', { name: 'Save' }).click();
    const provider = row(page, 'providers-table', 'vendor');
    await provider.waitFor();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await provider.locator('td.api-key').textContent()).toBe('set');
    expect(await provider.textContent()).toContain('x-gateway-key (set)');
    expect(await everythingOnPage(page)).not.toContain(API_KEY);
    expect(await everythingOnPage(page)).not.toContain(HEADER_VALUE);

    // Editing shows the key as "set" and sends nothing for it when left empty.
    await provider.getByRole('button', { name: 'Edit provider vendor' }).click();
    expect(await page.getByLabel('API key').inputValue()).toBe('');
    expect(await page.getByLabel('API key').getAttribute('placeholder')).toBe('set');
    expect(await page.locator('#edit-provider-apiKey-hint').textContent()).toMatch(/^set:/);
    await page.getByLabel('Timeout (ms)').fill('20000');
    await page.getByRole('button', { name: 'Save' }).click();
    await saved(page);
    expect(await everythingOnPage(page)).not.toContain(API_KEY);
    const stored = await served.t.gql(`{ providers { name hasApiKey headerNames settings } }`);
    expect(stored.data.providers).toEqual([{ name: 'vendor', hasApiKey: true, headerNames: ['x-gateway-key'], settings: { timeoutMs: 20000 } }]);

    // Model: "Model id" is required by the API.
    await page.getByRole('button', { name: 'New model' }).click();
    await expect.poll(() => page.getByLabel('Provider').locator('option:checked').textContent()).toContain('vendor');
    await page.getByLabel('Name').fill('small');
    await page.getByLabel('Input price per million tokens').fill('0.15');
    await page.getByLabel('Output price per million tokens').fill('0.6');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => fieldError(page, page.getByLabel('Model id'))).toMatch(/must not be empty/);
    await page.getByLabel('Model id').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Save' }).click();
    await row(page, 'models-table', 'small').waitFor();
    expect(await row(page, 'models-table', 'small').textContent()).toContain('$0.15');

    // Configuration: an iteration cap over 50 is refused beside "Iteration cap".
    await page.getByRole('button', { name: 'New configuration' }).click();
    await expect.poll(() => page.getByLabel('Model').locator('option:checked').textContent()).toContain('small');
    await page.getByLabel('Name').fill('assistant');
    await page.getByLabel('Privacy level').selectOption('FULL');
    await page.getByRole('group', { name: 'Allowed tool groups' }).getByLabel('content', { exact: true }).check();
    await page.getByLabel('Iteration cap').fill('99');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => fieldError(page, page.getByLabel('Iteration cap'))).toMatch(/at most 50/);
    await page.getByLabel('Iteration cap').fill('3');
    await page.getByLabel('Second approver').check();
    await page.getByRole('button', { name: 'Save' }).click();
    const configuration = row(page, 'configurations-table', 'assistant');
    await configuration.waitFor();
    await expect.poll(() => configuration.textContent()).toContain('FULL');
    const created = await served.t.gql(`{ configurations { name privacyLevel allowedToolGroups maxIterations requireSecondApprover model { name } } }`);
    expect(created.data.configurations).toEqual([
      { name: 'assistant', privacyLevel: 'FULL', allowedToolGroups: ['content'], maxIterations: 3, requireSecondApprover: true, model: { name: 'small' } },
    ]);

    // Edit: the form holds the stored values; a change is saved.
    await configuration.getByRole('button', { name: 'Edit configuration assistant' }).click();
    expect(await page.getByLabel('Iteration cap').inputValue()).toBe('3');
    await page.getByLabel('Privacy level').selectOption('REDACTED');
    await page.getByRole('button', { name: 'Save' }).click();
    await saved(page);
    await expect.poll(() => configuration.textContent()).toContain('REDACTED');

    // The Playground offers it.
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    await expect.poll(() => page.getByLabel('Configuration', { exact: true }).locator('option:checked').textContent()).toContain('assistant');
    expect(admin.problems).toEqual([]);
  }, 90_000);

  it('should refuse to delete a model in use, with the reason, then delete the configuration, the model and the provider', async () => {
    const { page } = admin;
    await openAdmin(page);
    const model = row(page, 'models-table', 'small');
    await model.getByRole('button', { name: 'Delete model small' }).click();
    await model.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText(/used by 1 configuration/).waitFor();

    const configuration = row(page, 'configurations-table', 'assistant');
    await configuration.getByRole('button', { name: 'Delete configuration assistant' }).click();
    await configuration.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Deleted configuration assistant.').waitFor();
    await model.getByRole('button', { name: 'Delete model small' }).click();
    await model.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Deleted model small.').waitFor();
    const provider = row(page, 'providers-table', 'vendor');
    await provider.getByRole('button', { name: 'Delete provider vendor' }).click();
    await provider.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Deleted provider vendor.').waitFor();
    const left = await served.t.gql(`{ providers { name } models { name } configurations { name } }`);
    expect(left.data).toEqual({ providers: [], models: [], configurations: [] });
    expect(admin.problems).toEqual([]);
  }, 60_000);

  it("should show a new user's token once, with a copy button, and that token signs in", async () => {
    const { page } = admin;
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await openAdmin(page);
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByLabel('Name').fill('dana');
    await page.getByRole('button', { name: 'Save' }).click();
    const tokenField = page.locator('#new-token');
    await tokenField.waitFor();
    const token = await tokenField.inputValue();
    expect(token.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await everythingOnPage(page)).not.toContain(token);
    // Not shown again after a reload either: only its digest is stored.
    await page.reload();
    await row(page, 'users-table', 'dana').waitFor();
    expect(await everythingOnPage(page)).not.toContain(token);

    const other = await browser.newContext();
    try {
      const { page: dana, problems } = await watchedPage(other);
      await signIn(dana, base, token);
      expect(await dana.locator('#viewer-name').textContent()).toBe('dana');
      // Signing out closes the websocket from the client's side before the context goes.
      await dana.getByRole('button', { name: 'Sign out' }).click();
      await dana.getByLabel('API token').waitFor();
      expect(problems).toEqual([]);
    } finally {
      await other.close();
    }

    // A budget for dana: a negative limit is refused beside its field.
    await page.getByRole('button', { name: 'New budget' }).click();
    await page.getByLabel('Limits whom').selectOption({ label: 'User dana' });
    await page.getByLabel('Max requests').fill('-1');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => fieldError(page, page.getByLabel('Max requests'))).toMatch(/must not be negative/);
    await page.getByLabel('Max requests').fill('100');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved the budget.').waitFor();
    expect(await page.locator('#budgets-table').textContent()).toContain('0 of 100');

    // Deactivate: dana's row says so.
    await row(page, 'users-table', 'dana').getByRole('button', { name: 'Deactivate dana' }).click();
    await page.getByText('Deactivated dana.').waitFor();
    expect(admin.problems).toEqual([]);
  }, 60_000);

  it('should switch a tool off and reset it to its default', async () => {
    const { page } = admin;
    await openAdmin(page);
    const tool = page.getByRole('switch', { name: 'read_records', exact: true });
    await tool.waitFor();
    expect(await tool.isChecked()).toBe(true);
    await tool.uncheck();
    const reset = page.getByRole('button', { name: 'Reset read_records to its default' });
    await reset.waitFor();
    expect((await served.t.gql(`{ tools { name enabled } }`)).data.tools).toContainEqual({ name: 'read_records', enabled: false });
    await reset.click();
    await reset.waitFor({ state: 'detached' });
    // The list reloads after the reset (and may be reloading already, with the data of before it):
    // the switch shows the default once the reset's reload has rendered.
    await expect.poll(() => tool.isChecked(), { timeout: 20_000 }).toBe(true);
    expect((await served.t.gql(`{ tools { name enabled overridden } }`)).data.tools).toContainEqual({ name: 'read_records', enabled: true, overridden: false });
    expect(admin.problems).toEqual([]);
  }, 60_000);

  it('axe finds nothing serious on the Admin page with a form open and a field refused, at 1280 and 390 px wide', async () => {
    const axeContext = await browser.newContext({ bypassCSP: true });
    try {
      const { page, problems } = await watchedPage(axeContext);
      await signIn(page, base, served.t.adminToken);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await openAdmin(page);
        await page.getByRole('button', { name: 'New provider' }).click();
        await page.getByLabel('Base URL').fill('not a url');
        await page.getByRole('button', { name: 'Save' }).click();
        await expect.poll(() => fieldError(page, page.getByLabel('Base URL'))).not.toBeNull();
        await expectNoSeriousAxeViolation(page, `admin at ${width} px`);
        await page.getByRole('button', { name: 'Cancel' }).click();
        await page.getByRole('link', { name: 'Runs', exact: true }).click();
      }
      expect(problems).toEqual([]);
    } finally {
      await axeContext.close();
    }
  }, 60_000);
});

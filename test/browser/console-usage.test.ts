import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { signIn, watchedPage, type WatchedPage } from './console-page.ts';

/**
 * The Admin page's usage chart tells the truth (issue 28): its x-axis is the range chosen, every
 * UTC day of it a bar (zero without usage) and a row of the table beside it, cost or tokens.
 * Usage records are written straight into the database at chosen instants, and the browser runs
 * at UTC+14, so a day taken from local time instead of UTC would land on the wrong bar. The
 * chart is read through what the page renders (its data attributes and the table), not pixels.
 */

const DAY_MS = 86_400_000;
const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);
const daysFrom = (first: string, count: number) => Array.from({ length: count }, (_, i) => utcDay(Date.parse(`${first}T00:00:00Z`) + i * DAY_MS));

describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the usage chart in Chromium on %s', (kind) => {
  let served: ServedApp<never>;
  let browser: Browser;
  let context: BrowserContext;
  let admin: WatchedPage;

  const record = (at: string, promptTokens: number, completionTokens: number, cost: number) =>
    served.t.app.services.db
      .insertInto('usage_records')
      .values({ id: crypto.randomUUID(), user_id: null, configuration_id: null, model_id: null, run_id: null, prompt_tokens: promptTokens, completion_tokens: completionTokens, cost, created_at: new Date(at) })
      .execute();

  beforeAll(async () => {
    served = await startServedApp(kind);
    // One day of usage: two calls late on June 10 (UTC), already June 11 in the browser's time zone.
    await record('2026-06-10T23:30:00.000Z', 100, 20, 0.25);
    await record('2026-06-10T11:00:00.000Z', 10, 5, 0.5);
    // Thirty days of usage in September: day n costs n cents and uses 11·n tokens.
    for (const [index, day] of daysFrom('2026-09-01', 30).entries()) await record(`${day}T12:00:00.000Z`, 10 * (index + 1), index + 1, (index + 1) / 100);
    // Just outside September, on both sides: never on the chart.
    await record('2026-08-31T23:59:59.999Z', 1000, 1000, 9);
    await record('2026-10-01T00:00:00.000Z', 1000, 1000, 9);

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Pacific/Kiritimati' });
    admin = await watchedPage(context);
    admin.page.on('requestfailed', (request) => admin.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
    admin.page.on('response', (response) => {
      if (response.status() >= 400) admin.problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    await signIn(admin.page, served.url.replace(/\/graphql$/, ''), served.t.adminToken);
    await admin.page.getByRole('link', { name: 'Admin', exact: true }).click();
    await admin.page.locator('#usage-section').waitFor();
  });
  afterAll(async () => {
    // The server first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    await served?.t.stop();
    await context?.close();
    await browser?.close();
  });

  /** The chart once it shows [from, to], as its data attributes say. */
  const chartOf = async (page: Page, from: string, to: string, measure = 'cost') => {
    const chart = page.locator(`.usage-chart[data-from="${from}"][data-to="${to}"][data-measure="${measure}"]`);
    await chart.waitFor({ timeout: 10_000 });
    // uPlot drew it: a canvas and the title naming the range.
    expect(await chart.locator('canvas').count()).toBeGreaterThan(0);
    expect(await chart.locator('.u-title').textContent()).toContain(`${from} to ${to}`);
    return {
      days: ((await chart.getAttribute('data-days')) ?? '').split(' '),
      values: ((await chart.getAttribute('data-values')) ?? '').split(' ').map(Number),
      bars: Number(await chart.getAttribute('data-bars')),
      title: await chart.locator('.u-title').textContent(),
    };
  };
  /** The table's rows: the day, then requests, prompt, completion and total tokens, and cost. */
  const tableRows = (page: Page) =>
    page.locator('#usage-table tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent ?? '')));
  const chooseRange = async (page: Page, from: string, to: string) => {
    await page.getByLabel('From (UTC)').fill(from);
    await page.getByLabel('To (UTC)').fill(to);
  };

  it('should open on the last 30 UTC days, and span each preset\'s days even without usage', async () => {
    const { page, problems } = admin;
    for (const [button, count] of [['Last 30 days', 30], ['Last 7 days', 7], ['Last day', 1]] as const) {
      // The range is taken from "now": asked for both before and after, in case midnight (UTC) passes between.
      const before = utcDay(Date.now());
      if (count !== 30) await page.getByRole('button', { name: button, exact: true }).click();
      const to = await page.getByLabel('To (UTC)').inputValue();
      expect([before, utcDay(Date.now())]).toContain(to);
      const from = utcDay(Date.parse(`${to}T00:00:00Z`) - (count - 1) * DAY_MS);
      expect(await page.getByLabel('From (UTC)').inputValue()).toBe(from);
      expect(await page.getByRole('button', { name: button, exact: true }).getAttribute('aria-pressed')).toBe('true');
      const chart = await chartOf(page, from, to);
      expect(chart.days).toEqual(daysFrom(from, count));
      expect(chart.bars).toBe(count);
      expect(chart.values).toEqual(Array(count).fill(0));
      expect((await tableRows(page)).map((row) => row[0])).toEqual(daysFrom(from, count));
      expect(await page.locator('#usage-section .empty').textContent()).toContain('No usage recorded');
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('should span the chosen range with usage on one day only: one bar, of that UTC day\'s value', async () => {
    const { page, problems } = admin;
    await chooseRange(page, '2026-06-08', '2026-06-14');
    const week = await chartOf(page, '2026-06-08', '2026-06-14');
    expect(week.days).toEqual(daysFrom('2026-06-08', 7));
    expect(week.values).toEqual([0, 0, 0.75, 0, 0, 0, 0]);
    const rows = await tableRows(page);
    expect(rows.map((row) => row[0])).toEqual(daysFrom('2026-06-08', 7));
    expect(rows[2]).toEqual(['2026-06-10', '2', '110', '25', '135', '$0.750000']);
    expect(rows.filter((row) => row[1] !== '0')).toHaveLength(1);
    expect(await page.locator('#usage-section .empty').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Last 7 days', exact: true }).getAttribute('aria-pressed')).toBe('false');

    // The one day alone: a single bar, the same value.
    await chooseRange(page, '2026-06-10', '2026-06-10');
    const day = await chartOf(page, '2026-06-10', '2026-06-10');
    expect(day).toMatchObject({ days: ['2026-06-10'], values: [0.75], bars: 1 });
    expect(await tableRows(page)).toEqual([['2026-06-10', '2', '110', '25', '135', '$0.750000']]);

    // A range ending before it begins is not asked for: the error is beside "To (UTC)".
    await page.getByLabel('To (UTC)').fill('2026-06-09');
    const to = page.getByLabel('To (UTC)');
    await expect.poll(() => to.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await to.getAttribute('aria-describedby')}"]`).textContent()).toContain('on or after From');
    expect(await page.locator('.usage-chart').count()).toBe(0);
    expect(problems).toEqual([]);
  }, 60_000);

  it('should show 30 bars and 30 rows for 30 days of usage, and the tokens when "Tokens" is chosen', async () => {
    const { page, problems } = admin;
    const september = daysFrom('2026-09-01', 30);
    await chooseRange(page, '2026-09-01', '2026-09-30');
    const cost = await chartOf(page, '2026-09-01', '2026-09-30');
    expect(cost.days).toEqual(september);
    expect(cost.bars).toBe(30);
    expect(cost.values).toEqual(september.map((_day, i) => (i + 1) / 100));
    expect(cost.title).toMatch(/^Cost/);
    const rows = await tableRows(page);
    expect(rows).toEqual(september.map((day, i) => [day, '1', String(10 * (i + 1)), String(i + 1), String(11 * (i + 1)), `$${((i + 1) / 100).toFixed(6)}`]));

    const show = page.getByRole('radiogroup', { name: 'Show' });
    expect(await show.getByRole('radio', { name: 'Cost' }).isChecked()).toBe(true);
    await show.getByRole('radio', { name: 'Tokens' }).check();
    const tokens = await chartOf(page, '2026-09-01', '2026-09-30', 'tokens');
    expect(tokens.days).toEqual(september);
    expect(tokens.values).toEqual(september.map((_day, i) => 11 * (i + 1)));
    expect(tokens.title).toMatch(/^Tokens/);
    expect(await tableRows(page)).toEqual(rows);

    await show.getByRole('radio', { name: 'Cost' }).check();
    expect((await chartOf(page, '2026-09-01', '2026-09-30')).values).toEqual(cost.values);
    expect(problems).toEqual([]);
  }, 60_000);
});

import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';

/**
 * GraphiQL in a real Chromium on a machine without internet: the page must load from the server
 * alone (Yoga's default page fetches its scripts from a CDN and stays on "Loading…"), and a query
 * typed in the editor with a token in the headers editor must run.
 */

/** Text of an element as the user reads it (Monaco renders spaces as no-break spaces). */
const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => (element.textContent ?? '').replace(/\u00a0/g, ' '));

describe.skipIf(!CHROMIUM)('GraphiQL in Chromium', () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
  });
  afterAll(() => browser?.close());

  describe.each(TEST_DATABASES)('on %s', (kind) => {
    let served: ServedApp<never>;
    beforeAll(async () => {
      served = await startServedApp(kind);
    });
    afterAll(() => served?.t.stop());

    it('should load from the server alone and run a query typed in the editor with a bearer token in the headers editor', async () => {
      const origin = new URL(served.url).origin;
      const requests: string[] = [];
      const sockets: string[] = [];
      const errors: string[] = [];
      const onRequest = (request: { url(): string }) => requests.push(request.url());
      const onSocket = (socket: { url(): string }) => sockets.push(socket.url());
      const onConsole = (message: { type(): string; text(): string }) => {
        if (message.type() === 'error') errors.push(message.text());
      };
      const onPageError = (error: Error) => errors.push(error.message);
      page.on('request', onRequest);
      page.on('websocket', onSocket);
      page.on('console', onConsole);
      page.on('pageerror', onPageError);
      try {
        const response = await page.goto(served.url);
        expect(response?.status()).toBe(200);
        // The editor appears only once GraphiQL's scripts ran (Yoga's CDN page never gets there offline).
        await page.waitForSelector('.graphiql-query-editor .monaco-editor', { timeout: 15_000 });
        // The link back to the console.
        expect(await page.$eval('a.airlock-console-link', (a) => a.getAttribute('href'))).toBe('/dashboard');

        await page.click('.graphiql-query-editor .monaco-editor .view-lines', { timeout: 5_000 });
        await page.keyboard.press('Control+A');
        await page.keyboard.press('Delete');
        // insertText: no key events, so Monaco's bracket auto-closing adds nothing.
        await page.keyboard.insertText('{ viewer { name isAdmin } }');
        await page.waitForFunction(() => document.querySelector('.graphiql-query-editor .view-lines')?.textContent?.replace(/\u00a0/g, ' ').includes('{ viewer { name isAdmin } }'), undefined, { timeout: 5_000 });

        // The headers editor opens on the Headers tab (it starts with a bearer placeholder).
        const headersTab = await page.waitForSelector('.graphiql-editors button:text-is("Headers")', { timeout: 5_000 });
        if (!(await headersTab.evaluate((button) => button.classList.contains('active')))) await headersTab.click();
        await page.click('.graphiql-editor-tool .graphiql-editor:not(.hidden) .monaco-editor .view-lines', { timeout: 5_000 });
        await page.keyboard.press('Control+A');
        await page.keyboard.press('Delete');
        await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${served.t.adminToken}` }));

        await page.click('.graphiql-execute-button');
        await page.waitForFunction(() => document.querySelector('.graphiql-response')?.textContent?.replace(/\u00a0/g, ' ').includes('"name": "admin"'), undefined, { timeout: 10_000 });
        const result = await textOf(page, '.graphiql-response');
        expect(result).toContain('"isAdmin": true');
        expect(result).not.toContain('"errors"');
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `graphiql-${kind}.png`) });

        // A subscription streams too: the Headers tab's token reaches graphql-ws's connection_init
        // (Yoga's own fetcher connected without it, was refused with 4403, and spun for ever).
        const configurationId = await scriptedConfiguration(served.t, `graphiql-${kind}`, { replies: [{ content: 'streamed in GraphiQL', toolCalls: [] }] });
        const subscription = `subscription { runAgent(input: { configurationId: "${configurationId}", prompt: "hello" }) { __typename ... on RunFinishedEvent { run { status finalContent } } } }`;
        await page.click('.graphiql-query-editor .monaco-editor .view-lines', { timeout: 5_000 });
        await page.keyboard.press('Control+A');
        await page.keyboard.press('Delete');
        await page.keyboard.insertText(subscription);
        await page.waitForFunction((text) => document.querySelector('.graphiql-query-editor .view-lines')?.textContent?.replace(/\u00a0/g, ' ').includes(text), 'streamed', { timeout: 5_000 }).catch(() => undefined);
        await page.click('.graphiql-execute-button');
        await page.waitForFunction(() => document.querySelector('.graphiql-response')?.textContent?.includes('RunFinishedEvent'), undefined, { timeout: 15_000 });
        const streamed = await textOf(page, '.graphiql-response');
        expect(streamed).toContain('"status": "COMPLETED"');
        expect(streamed).toContain('"finalContent": "streamed in GraphiQL"');
        expect(sockets.length).toBeGreaterThan(0);

        // Everything came from the server itself: no CDN, no other host.
        expect(requests.length).toBeGreaterThan(0);
        expect(requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
        const wsOrigin = origin.replace(/^http/, 'ws');
        expect(sockets.filter((url) => new URL(url).origin !== wsOrigin)).toEqual([]);
        expect(errors).toEqual([]);
        // The token typed in the headers editor is not kept in the browser's storage.
        const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
        expect(stored).not.toContain(served.t.adminToken);
      } finally {
        page.off('request', onRequest);
        page.off('websocket', onSocket);
        page.off('console', onConsole);
        page.off('pageerror', onPageError);
      }
    });
  });
});

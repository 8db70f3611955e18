import { copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { expectNoSeriousAxeViolation, signIn, watchedPage } from './console-page.ts';

/**
 * The console's look (issue 28): every page at a laptop's width and a phone's, in the light and the
 * dark scheme, over a realistic demo run (the demo configuration over the seeded records): axe finds
 * nothing serious (contrast included), the page never scrolls sideways (tables scroll on their own),
 * and nothing fails: no page error, no CSP violation, no request answered 4xx/5xx (the icon included).
 * AIRLOCK_DOCS_SCREENSHOTS=1 also writes the README's screenshots (docs/console-*.png).
 */
const DOCS_SCREENSHOTS = process.env.AIRLOCK_DOCS_SCREENSHOTS === '1';

/** The Playground's demo prompt (components/demo-setup.tsx): the run a newcomer makes first. */
const DEMO_PROMPT = 'Which tables can you read, and who are our first customers?';
const CREATE_DEMO = `mutation { createDemoConfiguration { __typename ... on Configuration { id } ... on Error { message } } }`;
const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }`;
const RUN_STATUS = `query($id: ID!) { run(id: $id) { status } }`;

const WIDTHS = [
  { name: 'laptop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;
const SCHEMES = ['light', 'dark'] as const;

type PageName = 'sign-in' | 'runs' | 'inspector' | 'playground' | 'approvals' | 'admin';

/** A page of the console: where it is and what shows it has finished loading. */
interface ConsolePage {
  readonly name: PageName;
  readonly hash: string;
  readonly loaded: (page: Page) => Promise<unknown>;
}

/** What must never happen on a page besides the watched page's problems: a request that fails or answers ≥ 400. */
function watchRequests(page: Page): string[] {
  const failures: string[] = [];
  page.on('requestfailed', (request) => failures.push(`failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()}: ${response.url()}`);
  });
  return failures;
}

/** The page's width against the viewport's, and the elements that stick out on the right unclipped (the page's sideways scroll). */
async function overflowingElements(page: Page): Promise<{ scrollWidth: number; innerWidth: number; culprits: string[] }> {
  return page.evaluate(() => {
    const clipped = (element: Element) => {
      for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX !== 'visible') return true;
      }
      return false;
    };
    const culprits = [...document.body.querySelectorAll('*')]
      .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(element))
      .slice(0, 5)
      .map((element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${[...element.classList].join('.')}`);
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, culprits };
  });
}

/** The page background's relative luminance (0 black … 1 white): tells which scheme the stylesheet applied. */
async function backgroundLuminance(page: Page): Promise<number> {
  const rgb = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((part) => {
    const c = Number(part) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

describe.skipIf(!CHROMIUM).each(TEST_DATABASES)("the console's look on %s", (kind) => {
  let served: ServedApp<never>;
  let base: string;
  let browser: Browser;
  let pages: ConsolePage[];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    served = await startServedApp(kind);
    base = served.url.replace(/\/graphql$/, '');
    // The run a newcomer makes first: the demo configuration, both its tools, over the seeded records.
    const demo = await served.t.gql(CREATE_DEMO);
    expect(demo.data?.createDemoConfiguration.__typename, JSON.stringify(demo)).toBe('Configuration');
    const started = await served.t.gql(START_RUN, {
      input: { configurationId: demo.data.createDemoConfiguration.id, prompt: DEMO_PROMPT, tools: ['describe_tables', 'read_records'] },
    });
    expect(started.data?.startRun.__typename, JSON.stringify(started)).toBe('Run');
    const runId = started.data.startRun.id as string;
    // Polled with a deadline (expect.poll belongs inside a test).
    for (const deadline = Date.now() + 15_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const status = (await served.t.gql(RUN_STATUS, { id: runId })).data?.run?.status;
      if (status === 'COMPLETED') break;
      if (Date.now() > deadline) throw new Error(`The demo run is ${status} after 15 s, not COMPLETED.`);
    }
    pages = [
      { name: 'runs', hash: '#/runs', loaded: (page) => page.locator(`#runs-table tr[data-run-id="${runId}"]`).waitFor() },
      {
        name: 'inspector',
        hash: `#/runs/${encodeURIComponent(runId)}`,
        loaded: async (page) => {
          await page.locator('#run-status[data-status="COMPLETED"]').waitFor();
          await expect.poll(() => page.locator('.step-tool').count()).toBe(2);
        },
      },
      { name: 'playground', hash: '#/playground', loaded: (page) => page.locator('#tool-read_records').waitFor() },
      { name: 'approvals', hash: '#/approvals', loaded: (page) => page.locator('main h1').waitFor() },
      {
        name: 'admin',
        hash: '#/admin',
        loaded: async (page) => {
          await page.locator('#configurations-table').waitFor();
          await page.locator('#usage-table').waitFor();
        },
      },
    ];
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    // The server first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    await served?.t.stop();
    for (const context of contexts) await context.close();
    await browser?.close();
  });

  /** Signs in, then visits every page, calling `check` on each once it has loaded (the sign-in page first). */
  async function everyPage(page: Page, check: (name: PageName) => Promise<void>): Promise<void> {
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('API token').waitFor();
    await check('sign-in');
    await signIn(page, base, served.t.adminToken);
    for (const { name, hash, loaded } of pages) {
      await page.goto(`${base}/dashboard${hash}`);
      await page.locator('main h1').waitFor();
      await loaded(page);
      await page.waitForLoadState('networkidle');
      await check(name);
    }
  }

  for (const width of WIDTHS) {
    for (const scheme of SCHEMES) {
      it(`should pass axe on every page at ${width.viewport.width} px in the ${scheme} scheme, with no sideways scroll and nothing failing`, async () => {
        // bypassCSP: axe is injected as a script. The CSP itself is checked in the test below.
        const context = await browser.newContext({ viewport: width.viewport, colorScheme: scheme, bypassCSP: true });
        contexts.push(context);
        const { page, problems } = await watchedPage(context);
        const failures = watchRequests(page);
        await everyPage(page, async (name) => {
          const luminance = await backgroundLuminance(page);
          expect(luminance, `${name}: the ${scheme} scheme's background`).toSatisfy((l: number) => (scheme === 'dark' ? l < 0.05 : l > 0.8));
          if (scheme === 'light') await page.screenshot({ path: path.join(SCREENSHOT_DIR, `look-${name}-${width.viewport.width}.png`), fullPage: true });
          await expectNoSeriousAxeViolation(page, `${name} at ${width.viewport.width} px, ${scheme}`);
          const fit = await overflowingElements(page);
          expect(fit.scrollWidth, `${name} at ${width.viewport.width} px scrolls sideways: ${fit.culprits.join(', ')}`).toBeLessThanOrEqual(fit.innerWidth + 1);
        });
        if (DOCS_SCREENSHOTS && scheme === 'light' && width.name === 'phone' && kind === TEST_DATABASES[0]) {
          copyFileSync(path.join(SCREENSHOT_DIR, 'look-inspector-390.png'), 'docs/console-inspector-phone.png');
        }
        expect(problems).toEqual([]);
        expect(failures).toEqual([]);
      }, 120_000);
    }
  }

  it('should keep the strict CSP on every page (no violation), serve the icon it links, and let GraphiQL load without a 404', async () => {
    const context = await browser.newContext({ viewport: WIDTHS[0].viewport });
    contexts.push(context);
    const { page, problems } = await watchedPage(context);
    const failures = watchRequests(page);
    const icons: string[] = [];
    page.on('response', (response) => {
      if (/favicon/.test(response.url())) icons.push(`${response.status()} ${response.headers()['content-type']} ${new URL(response.url()).pathname}`);
    });
    await everyPage(page, async (name) => {
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(icon, name).toBe('/dashboard/favicon.svg');
      if (!DOCS_SCREENSHOTS || kind !== TEST_DATABASES[0] || !['runs', 'inspector', 'playground'].includes(name)) return;
      // The README's screenshots: the demo run, its list and the Playground ready to start it again.
      if (name === 'playground') {
        await page.getByLabel('Prompt').fill(DEMO_PROMPT);
        for (const tool of ['describe_tables', 'read_records']) await page.locator(`#tool-${tool}`).check();
      }
      await page.screenshot({ path: `docs/console-${name}.png`, fullPage: name !== 'runs' });
    });
    // The header's brand draws the icon: the browser fetched it, as SVG, from the console.
    expect(icons).toContain('200 image/svg+xml /dashboard/favicon.svg');

    // GraphiQL links its own icon; a page that links none gets the console's at /favicon.ico.
    await page.goto(`${base}/graphql`);
    await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
    await page.waitForLoadState('networkidle');
    const ico = await page.request.get(`${base}/favicon.ico`);
    expect(ico.status()).toBe(200);
    expect(ico.headers()['content-type']).toBe('image/svg+xml');
    expect(problems).toEqual([]);
    expect(failures).toEqual([]);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

/**
 * GraphiQL's page over HTTP (the browser test, test/browser/graphiql.test.ts, drives it in Chromium;
 * this file also runs where Chromium is missing): every file it names is served by this server,
 * nothing names another host, no inline script runs, and production serves none of it.
 */

const HTML = { accept: 'text/html' };
/** GraphiQL's fetcher (graphql-ws with the Headers tab's token in connection_init), from the console bundle. */
const FETCHER = '/dashboard/graphiql.js';

interface PageConfig {
  options: Record<string, unknown>;
  workers: Record<string, string>;
}

async function openPage(t: TestApp): Promise<{ response: Response; html: string; config: PageConfig; files: string[] }> {
  const response = await t.fetch({ method: 'GET', headers: HTML });
  const html = await response.text();
  const json = /<script type="application\/json" id="graphiql-config">([^<]*)<\/script>/.exec(html)?.[1];
  expect(json, 'the page carries its configuration as JSON').toBeDefined();
  const config = JSON.parse(json!) as PageConfig;
  const linked = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
  return { response, html, config, files: [...linked, ...Object.values(config.workers)] };
}

describe.each(TEST_DATABASES)('GraphiQL page on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.stop());

  it('should name only files of this server, run no inline script, and send a strict CSP', async () => {
    const { response, html, files } = await openPage(t);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // No CDN, no other host: nothing absolute at all.
    expect(html).not.toMatch(/(?:https?:)?\/\/[a-z0-9]/i);
    expect(html).not.toContain('Loading');
    // Every script is a file of this server (GraphiQL's, or the console bundle's fetcher), or the inert JSON configuration.
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/ src="\/graphiql\/|src="\/dashboard\/graphiql\.js"|type="application\/json"/);
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const file of files) expect(file).toMatch(/^\/graphiql\/[0-9a-f]{16}\/[a-z.]+$|^\/dashboard\/graphiql\.js$/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp.split('; ')).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'", "worker-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]));
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('should serve every file the page names, with its type and for good, and 404 any other', async () => {
    const { files } = await openPage(t);
    // The fetcher is a file of the console's bundle (GET /dashboard/…, on the server's own port).
    expect(files).toContain(FETCHER);
    const base = (await t.app.server.start()).url.replace(/\/graphql$/, '');
    const fetcher = await fetch(`${base}${FETCHER}`);
    expect(fetcher.status).toBe(200);
    expect(fetcher.headers.get('content-type')).toContain('text/javascript');
    expect(await fetcher.text()).toContain('AirlockGraphiQL');
    for (const file of files.filter((name) => name !== FETCHER)) {
      const response = await t.fetch({ method: 'GET', path: file });
      expect(response.status, file).toBe(200);
      const expected = file.endsWith('.css') ? 'text/css' : file.endsWith('.js') ? 'text/javascript' : 'image/';
      expect(response.headers.get('content-type'), file).toContain(expected);
      expect(response.headers.get('cache-control'), file).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options'), file).toBe('nosniff');
      expect((await response.arrayBuffer()).byteLength, file).toBeGreaterThan(0);
    }
    const stale = files[0]!.replace(/\/[0-9a-f]{16}\//, '/0000000000000000/');
    for (const path of [stale, '/graphiql/', '/graphiql/../package.json']) {
      const response = await t.fetch({ method: 'GET', path });
      expect(response.status, path).toBe(404);
    }
  });

  it('should open with an empty bearer placeholder that is never persisted, and link to the console', async () => {
    const { config } = await openPage(t);
    expect(JSON.parse(config.options.headers as string)).toEqual({ Authorization: 'Bearer ' });
    expect(config.options.shouldPersistHeaders).toBe(false);
    expect(config.options.subscriptionsProtocol).toBe('WS');
    expect(config.options.title).toContain('href="/dashboard"');
  });

  it('should still answer GraphQL at the same URL for a client that asks for JSON', async () => {
    const response = await t.fetch({ method: 'GET', path: '/graphql?query=%7B__typename%7D', headers: { accept: 'application/json', authorization: `Bearer ${t.adminToken}` } });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('GraphiQL in production', () => {
  let dev: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    [dev, production] = await Promise.all([startTestApp('pglite'), startTestApp('pglite', { env: { NODE_ENV: 'production' } })]);
  });
  afterAll(() => Promise.all([dev?.stop(), production?.stop()]));

  it('should serve neither the page nor its files', async () => {
    const page = await production.fetch({ method: 'GET', headers: HTML });
    expect(page.headers.get('content-type') ?? '').not.toContain('text/html');
    expect(await page.text()).not.toMatch(/graphiql/i);
    const { files } = await openPage(dev);
    for (const file of files) {
      const response = await production.fetch({ method: 'GET', path: file });
      expect(response.status, file).toBe(404);
      expect(await response.text(), file).not.toMatch(/YogaGraphiQL|monaco/);
    }
  });
});

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardCsp } from '../../src/dashboard/route.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';

/** A raw GET: the path is sent exactly as written (fetch would normalise `..`). */
function get(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dashboardCsp', () => {
  it('allows the websocket of the request host and nothing a crafted Host header adds', () => {
    expect(dashboardCsp('localhost:4000')).toContain("connect-src 'self' ws://localhost:4000 wss://localhost:4000;");
    const crafted = dashboardCsp("evil.example; script-src 'unsafe-inline'");
    expect(crafted).toContain("connect-src 'self';");
    expect(crafted).not.toContain('unsafe-inline');
    expect(crafted).not.toContain('evil.example');
  });
});

describe.each(TEST_DATABASES)('GET /dashboard on %s', (kind) => {
  let served: ServedApp<never>;
  beforeAll(async () => {
    served = await startServedApp(kind);
  });
  afterAll(async () => {
    await served?.t.stop();
  });

  it('serves index.html with a strict CSP, nosniff and no referrer', async () => {
    const host = new URL(served.url).host;
    for (const path of ['/dashboard', '/dashboard/']) {
      const res = await get(served.url, path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<script type="module" src="/dashboard/app.js"></script>');
      const csp = String(res.headers['content-security-policy']);
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        `connect-src 'self' ws://${host} wss://${host}`,
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
      ]) {
        expect(csp).toContain(directive);
      }
      expect(csp).not.toContain('unsafe');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      // No inline script or style: the page only links its own files.
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
    }
  });

  it('serves the bundle as JavaScript and the styles as CSS, with the same headers', async () => {
    const js = await get(served.url, '/dashboard/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body.length).toBeGreaterThan(10_000);
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    expect(js.headers['content-security-policy']).toContain("script-src 'self'");
    const css = await get(served.url, '/dashboard/app.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toContain(':focus-visible');
    // Dark mode follows the system: the tokens are redefined, not the rules.
    expect(css.body).toMatch(/@media ?\(prefers-color-scheme: ?dark\)\s*\{\s*:root\s*\{[^}]*--bg:/);
  });

  it('serves the icon the page links as SVG with the same headers, and at /favicon.ico for pages that link none', async () => {
    const page = await get(served.url, '/dashboard');
    expect(page.body).toContain('<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">');
    const icon = await get(served.url, '/dashboard/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(icon.body).not.toMatch(/<script|\son[a-z]+=|href=/i);
    expect(icon.headers['x-content-type-options']).toBe('nosniff');
    expect(icon.headers['content-security-policy']).toContain("default-src 'self'");
    const ico = await get(served.url, '/favicon.ico');
    expect(ico.status).toBe(200);
    expect(ico.headers['content-type']).toBe('image/svg+xml');
    expect(ico.body).toBe(icon.body);
  });

  it('answers 404 for an unknown asset and for every path that tries to climb out', async () => {
    for (const path of [
      '/dashboard/nope.js',
      '/dashboard/main.js',
      '/dashboard/index.html/x',
      '/dashboard/../package.json',
      '/dashboard/..%2fpackage.json',
      '/dashboard/%2e%2e/package.json',
      '/dashboard/app/../../../package.json',
      '/dashboard//etc/passwd',
      '/dashboard/style.css',
      '/dashboard/nope.svg',
      '/dashboard/favicon.ico',
      '/favicon.svg',
    ]) {
      const res = await get(served.url, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).not.toContain('"name": "airlock"');
    }
  });

  it('leaves /graphql to GraphQL', async () => {
    const res = await get(served.url, '/graphql?query=%7B__typename%7D', { accept: 'application/json', authorization: `Bearer ${served.t.adminToken}` });
    expect(res.status).toBe(200);
    expect(res.body).toContain('"__typename":"Query"');
  });
});

import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import { APP_DIR, bundleDashboard, readBuiltDashboard, type DashboardAssets } from './bundle.ts';

export const DASHBOARD_PATH = '/dashboard';

/** Where browsers look for a site's icon when a page links none. */
const FAVICON_ICO = '/favicon.ico';

/** Where `npm run build` writes the bundle (next to the compiled route: dist/src/dashboard/assets). */
const BUILT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

/** A Host header as a CSP source may hold it: a name or address and a port, nothing else. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The console's Content-Security-Policy: its own scripts, styles and images only, no inline code,
 * GraphQL over the server's own websocket, never framed.
 */
export function dashboardCsp(host: string | undefined): string {
  const ws = host !== undefined && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src 'self'${ws}`,
    "img-src 'self' data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

export interface DashboardRoute {
  /** Answers a request for /dashboard or below it (or /favicon.ico) and returns true; returns false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Resolves once the bundle is ready (or failed: requests then get 503). */
  readonly ready: Promise<void>;
}

/**
 * GET /dashboard serves the console: `index.html` at /dashboard and /dashboard/, then exactly the
 * bundle's files (`/dashboard/app.js`, `/dashboard/app.css`, `/dashboard/favicon.svg`). Any other
 * path below it is 404: the names come from a fixed map, never from the file system, so no path can
 * climb out of it. `/favicon.ico` answers with the console's icon too: a browser asks for it on any
 * page of this server that links no icon (a JSON answer, GraphiQL without its bundle).
 * The bundle is built in memory when the server starts (from src/dashboard/app), or read from
 * dist/src/dashboard/assets after `npm run build`.
 */
export function dashboardRoute(logger: Logger): DashboardRoute {
  let assets: DashboardAssets | null = null;
  let failed = false;
  const ready = (existsSync(path.join(APP_DIR, 'main.tsx')) ? bundleDashboard() : readBuiltDashboard(BUILT_DIR)).then(
    (built) => {
      assets = built;
    },
    (error: unknown) => {
      failed = true;
      logger.error({ err: error }, 'could not build the console bundle: /dashboard answers 503');
    },
  );

  const send = (res: ServerResponse, req: IncomingMessage, status: number, contentType: string, body: Buffer | string) => {
    res.writeHead(status, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(body),
      'content-security-policy': dashboardCsp(req.headers.host),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, name: string | null) => {
    if (failed) return send(res, req, 503, 'text/plain; charset=utf-8', 'The console could not be built: see the server log.\n');
    const asset = name === null ? undefined : assets?.get(name);
    if (!asset) return send(res, req, 404, 'text/plain; charset=utf-8', 'Not found: the console lives at /dashboard.\n');
    send(res, req, 200, asset.contentType, asset.body);
  };

  return {
    ready,
    handle(req, res) {
      const raw = (req.url ?? '/').split('?')[0]!;
      const favicon = raw === FAVICON_ICO;
      if (!favicon && raw !== DASHBOARD_PATH && !raw.startsWith(`${DASHBOARD_PATH}/`)) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        res.end('Method not allowed: the console only answers GET.\n');
        return true;
      }
      const rest = raw.slice(DASHBOARD_PATH.length).replace(/^\//, '');
      const name = favicon ? 'favicon.svg' : rest === '' ? 'index.html' : rest === 'index.html' ? null : /^[a-z]+\.(js|css|svg)$/.test(rest) ? rest : null;
      if (assets === null && !failed) void ready.then(() => answer(req, res, name));
      else answer(req, res, name);
      return true;
    },
  };
}

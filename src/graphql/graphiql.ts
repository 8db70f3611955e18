import { createHash } from 'node:crypto';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/**
 * GraphiQL served from this server alone. Yoga's default page loads its scripts, styles and Monaco
 * workers from a public CDN, so on a machine without internet it stays on "Loading…" for ever. Here
 * the page is a small HTML document whose scripts, stylesheet, workers and icon are the bundles of
 * `@graphql-yoga/render-graphiql`, each served as its own file under {@link GRAPHIQL_ASSETS_PATH}
 * with a content hash in its path (cached for good). No inline script: the page's CSP allows
 * scripts and workers from this origin only, and requests to this origin only.
 */

/** Where GraphiQL's files are served (only while GraphiQL is: never in production). */
export const GRAPHIQL_ASSETS_PATH = '/graphiql/';

/** The console (served by the dashboard room); GraphiQL links back to it. */
export const CONSOLE_PATH = '/dashboard';

/**
 * The page's Content-Security-Policy. Styles may be inline: Monaco and React insert style elements
 * and attributes at run time, and a style runs no code. `'self'` in connect-src also covers the
 * graphql-ws socket on the same host and port.
 */
export const GRAPHIQL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of the GraphiQL page: its CSP, no framing, no sniffing, no referrer, never cached. */
const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': GRAPHIQL_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * The options GraphiQL opens with. The headers editor starts with an empty bearer token to paste
 * one after, and is never persisted: a token must not stay in the browser's storage.
 */
export const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: `Airlock GraphiQL · <a href="${CONSOLE_PATH}" class="airlock-console-link">Console</a>`,
  subscriptionsProtocol: 'WS',
  headers: JSON.stringify({ Authorization: 'Bearer ' }, null, 2),
  shouldPersistHeaders: false,
  defaultQuery: '# Paste your token after "Bearer " in the Headers tab below, then run (Ctrl-Enter).\n{\n  viewer {\n    name\n    isAdmin\n  }\n}\n',
};

/**
 * The one script the page runs after the bundles: set up Monaco's workers, render GraphiQL with our
 * fetcher (every operation over graphql-ws at this endpoint, the Headers tab's token in connection_init).
 */
const START_SCRIPT = `{
  const config = JSON.parse(document.getElementById('graphiql-config').textContent);
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => config.workers[label] };
  const endpoint = new URL(config.options.endpoint || location.pathname, location.href);
  endpoint.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';
  const { endpoint: _ignored, ...options } = config.options;
  YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), { ...options, fetcher: AirlockGraphiQL.createFetcher(endpoint.href) });
}
`;

/** The console bundle's GraphiQL fetcher (src/dashboard/app/graphiql.ts, bundled as graphiql.js), served by the console route. */
const FETCHER_SCRIPT = `${CONSOLE_PATH}/graphiql.js`;

/** Styles of the page's own additions (the link back to the console). */
const EXTRA_CSS = `.airlock-console-link { margin-left: 0.5em; font-size: 0.8em; color: hsl(var(--color-primary)); }
`;

interface Asset {
  readonly body: string | Uint8Array<ArrayBuffer>;
  readonly contentType: string;
}

interface Assets {
  /** Asset files by their path under GRAPHIQL_ASSETS_PATH (`<hash>/<name>`). */
  readonly files: ReadonlyMap<string, Asset>;
  readonly url: (name: string) => string;
}

const JS = 'text/javascript; charset=utf-8';

let loading: Promise<Assets> | undefined;

/** The bundles weigh about 9 MB: read (and hashed) on the first request for GraphiQL, then kept. */
function loadAssets(): Promise<Assets> {
  return (loading ??= (async () => {
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const icon = /^data:([^;,]+);base64,(.*)$/s.exec(bundle.favicon);
    const sources: Record<string, Asset> = {
      'graphiql.js': { body: bundle.js, contentType: JS },
      'start.js': { body: START_SCRIPT, contentType: JS },
      'graphiql.css': { body: `${bundle.css}\n${EXTRA_CSS}`, contentType: 'text/css; charset=utf-8' },
      'editor.worker.js': { body: bundle.editorWorkerService, contentType: JS },
      'json.worker.js': { body: bundle.jsonWorker, contentType: JS },
      'graphql.worker.js': { body: bundle.graphqlWorker, contentType: JS },
      ...(icon ? { 'favicon.ico': { body: new Uint8Array(Buffer.from(icon[2]!, 'base64')), contentType: icon[1]! } } : {}),
    };
    const hash = createHash('sha256');
    for (const [name, asset] of Object.entries(sources)) hash.update(name).update('\0').update(asset.body).update('\0');
    const version = hash.digest('hex').slice(0, 16);
    const files = new Map(Object.entries(sources).map(([name, asset]) => [`${version}/${name}`, asset]));
    return { files, url: (name: string) => `${GRAPHIQL_ASSETS_PATH}${version}/${name}` };
  })());
}

/** Escapes a JSON text for a `<script type="application/json">` element (no `</script>` breakout). */
function jsonInScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/** Yoga's `renderGraphiQL`: the page, which names its files by their hashed URLs. */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const { url, files } = await loadAssets();
  const config = {
    options,
    workers: { editorWorkerService: url('editor.worker.js'), json: url('json.worker.js'), graphql: url('graphql.worker.js') },
  };
  const icon = [...files.keys()].some((key) => key.endsWith('/favicon.ico')) ? `\n    <link rel="icon" href="${url('favicon.ico')}" />` : '';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Airlock GraphiQL</title>${icon}
    <link rel="stylesheet" href="${url('graphiql.css')}" />
    <script type="application/json" id="graphiql-config">${jsonInScript(config)}</script>
    <script src="${url('graphiql.js')}" defer></script>
    <script type="module" src="${FETCHER_SCRIPT}"></script>
    <script src="${url('start.js')}" defer></script>
  </head>
  <body class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript. Without it, send queries to this URL with POST and an Authorization: Bearer header.</noscript>
    <div id="root"></div>
  </body>
</html>
`;
}

/**
 * Serves GraphiQL's files and gives its page its security headers. Only installed while GraphiQL
 * is served (never in production), so in production `/graphiql/…` is a plain 404.
 */
export function useGraphiQLAssets(graphqlPath: string): Plugin {
  const pagePaths = new Set([graphqlPath, `${graphqlPath}/`]);
  return {
    async onRequest({ request, url, fetchAPI, endResponse }) {
      if (!url.pathname.startsWith(GRAPHIQL_ASSETS_PATH)) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      const { files } = await loadAssets();
      const asset = files.get(url.pathname.slice(GRAPHIQL_ASSETS_PATH.length));
      if (!asset) {
        endResponse(new fetchAPI.Response('Not found: reload GraphiQL at /graphql, its files may have changed.', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
        return;
      }
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : asset.body, {
          status: 200,
          headers: {
            'content-type': asset.contentType,
            'cache-control': 'public, max-age=31536000, immutable',
            'x-content-type-options': 'nosniff',
            'cross-origin-resource-policy': 'same-origin',
          },
        }),
      );
    },
    onResponse({ request, response }) {
      // Yoga's GraphiQL plugin answers at the GraphQL path with text/html; nothing else there does.
      // Other pages (the console) keep their own headers.
      if (request.method !== 'GET' || !pagePaths.has(new URL(request.url).pathname)) return;
      if (!(response.headers.get('content-type') ?? '').startsWith('text/html')) return;
      for (const [name, value] of Object.entries(PAGE_HEADERS)) response.headers.set(name, value);
    },
  };
}

import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import type { Metrics } from './metrics.ts';
import type { Readiness } from './readiness.ts';

export const METRICS_PATH = '/metrics';
export const READY_PATH = '/ready';

export interface ProbeRoutesDeps {
  readonly metrics: Metrics;
  /** Bearer token of /metrics; null = the endpoint is off (404, as any unknown path). */
  readonly metricsToken: string | null;
  readonly readiness: Readiness;
  readonly logger: Logger;
}

/**
 * `GET /metrics` (Prometheus text format, behind AIRLOCK_METRICS_TOKEN) and `GET /ready` (200 when
 * the database, and Redis when configured, answer; 503 otherwise, so a load balancer takes the
 * instance out). `/health` (the process is up) is yoga's. Returns false for any other path.
 */
export function probeRoutes(deps: ProbeRoutesDeps): { handle(req: IncomingMessage, res: ServerResponse): boolean } {
  const expected = deps.metricsToken === null ? null : digest(deps.metricsToken);
  const authorized = (req: IncomingMessage) => {
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    return expected !== null && match !== null && timingSafeEqual(digest(match[1]!), expected);
  };
  return {
    handle(req, res) {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (path === READY_PATH) {
        if (!allowGet(req, res)) return true;
        void deps.readiness.check().then((report) => send(res, report.ready ? 200 : 503, 'application/json', JSON.stringify(report)));
        return true;
      }
      if (path !== METRICS_PATH || expected === null) return false;
      if (!allowGet(req, res)) return true;
      if (!authorized(req)) {
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' });
        res.end('Unauthorized: send Authorization: Bearer <AIRLOCK_METRICS_TOKEN>.\n');
        return true;
      }
      deps.metrics.registry.metrics().then(
        (text) => send(res, 200, deps.metrics.registry.contentType, text),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'could not collect the metrics');
          send(res, 500, 'text/plain', 'Could not collect the metrics; see the server log.\n');
        },
      );
      return true;
    },
  };
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function allowGet(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
  res.end('Method Not Allowed\n');
  req.resume();
  return false;
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * The fan-out workload's gate, so that every subscriber is subscribed before the events of interest:
 * in the harness process, in front of the fake OpenAI server, it holds the runs' first provider call
 * until `release`, which lets them go staggered.
 */
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Gate {
  /** The OpenAI base URL to give Airlock (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  /** From now on, the first provider call of a run waits until `release`. */
  hold(): void;
  held(): number;
  /** Lets the held calls go, one every `spacingMs`, in arrival order; later first calls pass. */
  release(spacingMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** A proxy to the fake OpenAI server that can hold the first call of every run (no assistant turn yet). */
export function startGate(fakeBaseUrl: string): Promise<Gate> {
  const upstream = new URL(fakeBaseUrl);
  const agent = new Agent({ keepAlive: true });
  let holding = false;
  const waiting: (() => void)[] = [];
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const call = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      },
    );
    call.on('error', () => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'fake server unreachable' } }));
    });
    call.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let first = false;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { messages?: { role: string }[] };
        first = !(parsed.messages ?? []).some((message) => message.role === 'assistant');
      } catch {
        // not JSON: the fake server answers it
      }
      if (holding && first) waiting.push(() => forward(req, body, res));
      else forward(req, body, res);
    });
  });
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
        hold: () => {
          holding = true;
        },
        held: () => waiting.length,
        release: async (spacingMs) => {
          holding = false;
          const start = performance.now();
          for (const [index, go] of waiting.splice(0).entries()) {
            const wait = start + index * spacingMs - performance.now();
            if (wait >= 1) await sleep(wait);
            go();
          }
        },
        stop: () =>
          new Promise((resolveStop) => {
            agent.destroy();
            server.closeAllConnections();
            server.close(() => resolveStop());
          }),
      });
    });
  });
}

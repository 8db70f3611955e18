/**
 * MCP calls (issue 17, measured in issue 19): `tools/call` of the benchmark tool through Airlock's
 * `/mcp` — bearer token, the gate at call time, argument validation, bounds, sanitising, and the
 * TOOL step of the session's audit run stored — against the official SDK's bare server offering the
 * same tool with none of that (`bin/bare-mcp.ts`), and against calling the tool function directly.
 * The same SDK client drives both servers (Streamable HTTP, one session per concurrent caller,
 * opened before the clock starts); each session makes its calls one after another. Repetitions
 * are interleaved (the order of the servers rotates); figures are medians.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { postgresAvailable, startAirlock, type DbKind } from '../lib/airlock.ts';
import { BENCH_TOOL_NAME, benchLookup } from '../lib/agent-tool.ts';
import { startServer } from '../lib/children.ts';
import { cpuMs } from '../lib/proc.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { fmt, fmtRatio, median, quantile, ratio, renderTable } from '../lib/stats.ts';

export interface McpOptions {
  readonly calls: number;
  readonly concurrencies: readonly number[];
  readonly repetitions: number;
  readonly warmUpCalls: number;
}

type Server = 'airlock' | 'bare';
interface Sample {
  readonly callsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Server process CPU per call, µs. */
  readonly cpuUs: number | null;
}
export interface McpFigure {
  readonly server: Server;
  readonly concurrency: number;
  readonly median: Sample;
}
export interface McpResult {
  readonly kind: DbKind;
  readonly figures: readonly McpFigure[];
  /** Calls per second of the tool function called directly, in this process. */
  readonly directCallsPerSecond: number;
  readonly table: string;
}

/**
 * The SDK client hands its session's one AbortSignal to every request, and Node's fetch (undici)
 * removes its abort listener only when the request is garbage-collected: thousands of calls in a
 * few seconds piled up on that signal and printed hundreds of MaxListenersExceededWarning lines.
 * A call's POST goes without it (the driver never cancels a call; it closes sessions after their
 * calls have answered); the session's GET stream and DELETE keep it.
 */
const fetchWithoutCallSignal: typeof fetch = (input, init) => fetch(input, init?.method === 'POST' ? { ...init, signal: null } : init);

async function session(url: URL, headers: Record<string, string>) {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: fetchWithoutCallSignal });
  const client = new Client({ name: 'airlock-bench', version: '1.0.0' });
  await client.connect(transport);
  return { client, close: () => transport.terminateSession().then(() => client.close()) };
}

type Session = Awaited<ReturnType<typeof session>>;

/** `calls` calls spread over the sessions, each session calling one after another. */
async function measure(sessions: readonly Session[], calls: number, pid: number): Promise<Sample> {
  const latencies: number[] = [];
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    sessions.map(async (open) => {
      while (next < calls) {
        const n = next++;
        const at = performance.now();
        const result = await open.client.callTool({ name: BENCH_TOOL_NAME, arguments: { n } });
        latencies.push(performance.now() - at);
        const text = (result.content as { text?: string }[])[0]?.text;
        if (result.isError || text !== benchLookup(n)) throw new Error(`unexpected answer to call ${n}: ${JSON.stringify(result)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuMs(pid);
  return {
    callsPerSecond: calls / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    cpuUs: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1000) / calls,
  };
}

function directCallsPerSecond(calls: number): number {
  let sink = 0;
  const started = performance.now();
  for (let n = 0; n < calls; n++) sink += benchLookup(n).length;
  const seconds = (performance.now() - started) / 1000;
  if (sink === 0) throw new Error('unreachable');
  return calls / seconds;
}

export async function runMcp(options: McpOptions): Promise<McpResult> {
  const kind: DbKind = (await postgresAvailable()) ? 'postgres' : 'pglite';
  const step = (text: string) => progress(`[mcp] ${text}`);
  step('starting the fake OpenAI server, Airlock and the bare SDK server');
  const fake = await startServer('bench/bin/fake-openai.ts', {}, /listening (\d+)/);
  const bare = await startServer('bench/bin/bare-mcp.ts', {}, /listening (\d+)/);
  // BENCH_MCP_PROFILE_DIR=<dir>: the Airlock server writes a V8 CPU profile there when it stops.
  const profileDir = process.env.BENCH_MCP_PROFILE_DIR;
  const airlock = await startAirlock(kind, {
    fakeBaseUrl: `http://127.0.0.1:${fake.ready[1]}/v1`,
    k: 3,
    ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
  });
  const endpoints: Record<Server, { url: URL; headers: Record<string, string>; pid: number }> = {
    airlock: {
      url: new URL(`/mcp?configuration=${encodeURIComponent(airlock.configurationId)}`, airlock.httpUrl),
      headers: { authorization: `Bearer ${airlock.userToken}` },
      pid: airlock.server.pid,
    },
    bare: { url: new URL(`http://127.0.0.1:${bare.ready[1]}/mcp`), headers: {}, pid: bare.pid },
  };
  const samples = new Map<string, Sample[]>();
  const opened: Session[] = [];
  try {
    for (const concurrency of options.concurrencies) {
      const sessions: Record<Server, Session[]> = { airlock: [], bare: [] };
      for (const server of ['airlock', 'bare'] as const) {
        step(`c = ${concurrency}: opening ${concurrency} sessions on ${server} and warming up (${options.warmUpCalls} calls)`);
        const { url, headers, pid } = endpoints[server];
        sessions[server] = await Promise.all(Array.from({ length: concurrency }, () => session(url, headers)));
        opened.push(...sessions[server]);
        await measure(sessions[server], options.warmUpCalls, pid);
      }
      for (let repetition = 0; repetition < options.repetitions; repetition++) {
        const order: Server[] = repetition % 2 === 0 ? ['airlock', 'bare'] : ['bare', 'airlock'];
        for (const server of order) {
          step(`c = ${concurrency}: repetition ${repetition + 1}/${options.repetitions}, ${server}: ${options.calls} calls`);
          const key = `${server}/${concurrency}`;
          samples.set(key, [...(samples.get(key) ?? []), await measure(sessions[server], options.calls, endpoints[server].pid)]);
        }
      }
    }
  } finally {
    progressDone();
    await Promise.allSettled(opened.map((open) => open.close()));
    await airlock.stop();
    await bare.stop();
    await fake.stop();
  }
  const medianOf = (list: readonly Sample[]): Sample => {
    const cpu = list.map((sample) => sample.cpuUs).filter((value): value is number => value !== null);
    return {
      callsPerSecond: median(list.map((sample) => sample.callsPerSecond)),
      p50Ms: median(list.map((sample) => sample.p50Ms)),
      p99Ms: median(list.map((sample) => sample.p99Ms)),
      cpuUs: cpu.length === 0 ? null : median(cpu),
    };
  };
  const figures = options.concurrencies.flatMap((concurrency) =>
    (['airlock', 'bare'] as const).map((server) => ({ server, concurrency, median: medianOf(samples.get(`${server}/${concurrency}`) ?? []) })),
  );
  const direct = directCallsPerSecond(Math.max(100_000, options.calls * 100));
  const label: Record<Server, string> = { airlock: `Airlock /mcp (${kind}, audit run stored)`, bare: 'SDK McpServer, no governance' };
  const rows = figures.map((figure) => {
    const baseline = figures.find((other) => other.server === 'bare' && other.concurrency === figure.concurrency)!.median;
    return [
      label[figure.server],
      String(figure.concurrency),
      fmt(figure.median.callsPerSecond),
      fmtRatio(ratio(figure.median.callsPerSecond, baseline.callsPerSecond)),
      fmt(figure.median.p50Ms, 2),
      fmt(figure.median.p99Ms, 2),
      fmt(figure.median.cpuUs),
      fmtRatio(ratio(figure.median.cpuUs, baseline.cpuUs)),
    ];
  });
  rows.push(['the tool function called directly (no protocol)', '1', fmt(direct), '—', '—', '—', '—', '—']);
  const table = [
    `${options.calls} calls per repetition, ${options.repetitions} interleaved repetitions after ${options.warmUpCalls} warm-up calls, medians; one SDK client session per concurrent caller`,
    renderTable(['server', 'c', 'calls/s', '× bare', 'p50 ms', 'p99 ms', 'server CPU µs/call', 'CPU × bare'], rows),
  ].join('\n');
  return { kind, figures, directCallsPerSecond: direct, table };
}

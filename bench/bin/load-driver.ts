/**
 * The client side of the load scenario (`bench/workloads/load.ts`), in its own process so that the
 * server under test is measured alone. The harness starts two of them:
 * - the **watcher** holds the idle `runEvents` subscriptions, one graphql-ws connection each, on
 *   runs that stay RUNNING, and records everything each of them receives (events, errors, drops);
 * - the **runner** drives the concurrent runs: one graphql-ws connection per worker, each worker
 *   calling `runAgent` back to back until the deadline, recording the steps it received live.
 * Everything is recorded, nothing is judged here: the harness compares it with what was stored.
 */
import type { Client } from 'graphql-ws';
import { BENCH_PROMPT } from '../lib/agent-tool.ts';
import { serveDriver } from '../lib/children.ts';
import { connectGraphqlWs, inPool } from '../lib/ws-client.ts';

const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) {
  __typename
  ... on RunStartedEvent { run { id } }
  ... on RunStepEvent { step { sequence kind } }
  ... on RunFinishedEvent { run { id status auditIncomplete } }
} }`;
const RUN_EVENTS = `subscription($runId: ID!) { runEvents(runId: $runId) {
  __typename
  ... on RunStepEvent { step { sequence kind } }
  ... on RunFinishedEvent { run { status } }
} }`;

/**
 * A run that takes longer than this is recorded as an error and left, so that a run the server
 * never ends shows up instead of hanging the scenario (a run of 200 in flight takes seconds).
 */
const RUN_TIMEOUT_MS = 120_000;

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : Array.isArray(error) ? JSON.stringify(error) : typeof error === 'object' && error && 'code' in error ? `socket closed (code ${(error as { code: number }).code}, reason ${JSON.stringify((error as { reason?: string }).reason ?? '')})` : String(error);

// ── the watcher: idle runEvents subscriptions ───────────────────────────────
interface Watch {
  readonly runIndex: number;
  /** Step sequences received, in order of receipt. */
  readonly steps: number[];
  events: number;
  finished: string | null;
  completed: boolean;
  error: string | null;
  socketClosed: boolean;
}

let initiator: Client | null = null;
const waitingRunIds: string[] = [];
const watchers: Client[] = [];
const watches: Watch[] = [];

async function startWaitingRuns(wsUrl: string, token: string, configurationId: string, count: number): Promise<string[]> {
  // The initiator stays subscribed: leaving runAgent would cancel the runs.
  initiator ??= await connectGraphqlWs(wsUrl, token);
  const client = initiator;
  const ids = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<string>((resolve, reject) => {
          let first = true;
          client.subscribe(
            { query: RUN_AGENT, variables: { input: { configurationId, prompt: BENCH_PROMPT } } },
            {
              next: (result) => {
                if (!first) return;
                first = false;
                const event = (result.data as { runAgent?: { __typename: string; run?: { id: string } } } | null)?.runAgent;
                if (result.errors || event?.__typename !== 'RunStartedEvent') reject(new Error(`the waiting run did not start: ${JSON.stringify(result)}`));
                else resolve(event.run!.id);
              },
              error: (error) => first && reject(new Error(describe(error))),
              complete: () => first && reject(new Error('the waiting run ended before it started')),
            },
          );
        }),
    ),
  );
  waitingRunIds.push(...ids);
  return ids;
}

/** Opens `count` connections, each with one runEvents subscription on `runIds[i % n]`, held until told. */
async function openIdle(wsUrl: string, token: string, runIds: readonly string[], count: number): Promise<number> {
  await inPool(count, 50, async (index) => {
    const client = await connectGraphqlWs(wsUrl, token);
    watchers.push(client);
    const watch: Watch = { runIndex: index % runIds.length, steps: [], events: 0, finished: null, completed: false, error: null, socketClosed: false };
    watches.push(watch);
    client.on('closed', () => (watch.socketClosed = true));
    await new Promise<void>((resolve, reject) => {
      client.subscribe(
        { query: RUN_EVENTS, variables: { runId: runIds[watch.runIndex] } },
        {
          next: (result) => {
            watch.events += 1;
            if (result.errors) watch.error ??= JSON.stringify(result.errors);
            const event = (result.data as { runEvents?: { __typename: string; step?: { sequence: number }; run?: { status: string } } } | null)?.runEvents;
            if (event?.__typename === 'RunStepEvent') watch.steps.push(event.step!.sequence);
            if (event?.__typename === 'RunFinishedEvent') watch.finished = event.run!.status;
            // The replay starts with RunStartedEvent: from then on the subscription is live.
            if (watch.events === 1) (result.errors ? reject(new Error(watch.error!)) : resolve());
          },
          error: (error) => {
            watch.error ??= describe(error);
            if (watch.events === 0) reject(new Error(watch.error));
          },
          complete: () => {
            watch.completed = true;
            if (watch.events === 0) reject(new Error('runEvents completed before its first event'));
          },
        },
      );
    });
  });
  return watches.length;
}

function idleStatus() {
  return {
    subscriptions: watches.length,
    /** Neither completed, nor errored, nor on a closed socket. */
    open: watches.filter((watch) => !watch.completed && watch.error === null && !watch.socketClosed).length,
    errors: watches.filter((watch) => watch.error !== null).length,
    socketsClosed: watches.filter((watch) => watch.socketClosed).length,
    completed: watches.filter((watch) => watch.completed).length,
    events: watches.reduce((sum, watch) => sum + watch.events, 0),
    firstError: watches.find((watch) => watch.error !== null)?.error ?? null,
  };
}

/** Waits (up to `timeoutMs`) until every idle subscription ended, then reports each of them. */
async function finishIdle(timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && watches.some((watch) => !watch.completed && watch.error === null)) await new Promise((resolve) => setTimeout(resolve, 100));
  return watches.map(({ runIndex, steps, finished, completed, error, socketClosed }) => ({ runIndex, steps, finished, completed, error, socketClosed }));
}

// ── the runner: concurrent runAgent loops ───────────────────────────────────
export interface RunRecord {
  /** The Run's global id (null when it never started). */
  readonly id: string | null;
  /** `sequence:kind` of every RunStepEvent received, in order of receipt. */
  readonly steps: string[];
  readonly status: string | null;
  readonly auditIncomplete: boolean | null;
  /** When it was started, ms after the start of the load (this process's clock). */
  readonly startMs: number;
  readonly ms: number;
  readonly error: string | null;
}

let runnerUrl = '';
let runnerToken = '';
let runners: { client: Client; closed: boolean }[] = [];
const live = { started: 0, finished: 0, errors: 0, steps: 0, inFlight: 0, firstError: null as string | null };

async function connectRunner(): Promise<{ client: Client; closed: boolean }> {
  const client = await connectGraphqlWs(runnerUrl, runnerToken);
  const runner = { client, closed: false };
  client.on('closed', () => (runner.closed = true));
  return runner;
}

function runOnce(client: Client, configurationId: string, prompt: string, loadStartedAt: number): Promise<RunRecord> {
  const startedAt = performance.now();
  const steps: string[] = [];
  let id: string | null = null;
  let finished: { status: string; auditIncomplete: boolean } | null = null;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const end = finished as { status: string; auditIncomplete: boolean } | null;
      resolve({ id, steps, status: end?.status ?? null, auditIncomplete: end?.auditIncomplete ?? null, startMs: startedAt - loadStartedAt, ms: performance.now() - startedAt, error });
    };
    const timer = setTimeout(() => {
      settle(`no end within ${RUN_TIMEOUT_MS} ms`);
      unsubscribe();
    }, RUN_TIMEOUT_MS);
    const unsubscribe = client.subscribe(
      { query: RUN_AGENT, variables: { input: { configurationId, prompt } } },
      {
        next: (result) => {
          if (result.errors) return settle(`GraphQL errors: ${JSON.stringify(result.errors)}`);
          const event = (result.data as { runAgent: { __typename: string; run?: { id: string; status: string; auditIncomplete: boolean }; step?: { sequence: number; kind: string } } }).runAgent;
          if (event.__typename === 'RunStartedEvent') id = event.run!.id;
          else if (event.__typename === 'RunStepEvent') {
            steps.push(`${event.step!.sequence}:${event.step!.kind}`);
            live.steps += 1;
          } else if (event.__typename === 'RunFinishedEvent') {
            id ??= event.run!.id;
            finished = { status: event.run!.status, auditIncomplete: event.run!.auditIncomplete };
          }
        },
        error: (error) => settle(describe(error)),
        complete: () => {
          if (!finished) return settle('runAgent completed without a RunFinishedEvent');
          if (finished.status !== 'COMPLETED') return settle(`run ended ${finished.status}`);
          if (finished.auditIncomplete) return settle('run ended with auditIncomplete');
          settle(null);
        },
      },
    );
  });
}

/** Every worker runs back to back until `durationMs` passed (or `runsPerWorker` runs, for a warm-up). */
async function runLoad(configurationId: string, durationMs: number, runsPerWorker: number | null): Promise<{ wallMs: number; runs: RunRecord[] }> {
  const records: RunRecord[] = [];
  const started = performance.now();
  const deadline = started + durationMs;
  Object.assign(live, { started: 0, finished: 0, errors: 0, steps: 0, inFlight: 0, firstError: null });
  await Promise.all(
    runners.map(async (runner, worker) => {
      for (let done = 0; runsPerWorker === null ? performance.now() < deadline : done < runsPerWorker; done++) {
        if (runner.closed) {
          // Recorded as an error by the run that saw the drop; carry on with a new socket.
          try {
            Object.assign(runner, await connectRunner());
          } catch (error) {
            records.push({ id: null, steps: [], status: null, auditIncomplete: null, startMs: performance.now() - started, ms: 0, error: `could not reconnect: ${describe(error)}` });
            live.errors += 1;
            return;
          }
        }
        live.started += 1;
        live.inFlight += 1;
        const record = await runOnce(runner.client, configurationId, `${BENCH_PROMPT} (worker ${worker}, run ${done})`, started);
        live.inFlight -= 1;
        live.finished += 1;
        if (record.error) {
          live.errors += 1;
          live.firstError ??= record.error;
        }
        records.push(record);
      }
    }),
  );
  return { wallMs: performance.now() - started, runs: records };
}

serveDriver(async (message: { type: string; wsUrl: string; token: string; configurationId: string; count: number; runIds: string[]; durationMs: number; runsPerWorker: number | null; timeoutMs: number }) => {
  switch (message.type) {
    case 'start-waiting-runs':
      return { runIds: await startWaitingRuns(message.wsUrl, message.token, message.configurationId, message.count) };
    case 'open-idle':
      return { subscriptions: await openIdle(message.wsUrl, message.token, message.runIds, message.count) };
    case 'idle-status':
      return idleStatus();
    case 'finish-idle':
      return { watches: await finishIdle(message.timeoutMs), waitingRunIds };
    case 'connect-runners':
      runnerUrl = message.wsUrl;
      runnerToken = message.token;
      runners = await inPool(message.count, 50, () => connectRunner());
      return { connections: runners.length };
    case 'run-load':
      return runLoad(message.configurationId, message.durationMs, message.runsPerWorker);
    case 'load-status':
      return { ...live };
    case 'close': {
      await Promise.all([...watchers.splice(0), ...runners.splice(0).map((runner) => runner.client), ...(initiator ? [initiator] : [])].map((client) => client.dispose()));
      initiator = null;
      return {};
    }
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});

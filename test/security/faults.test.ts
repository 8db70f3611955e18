import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunBusEvent } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { RunOutcome, RunStep } from '../../src/runtime/run.ts';
import { CLOSING_WRITE_RETRY_DELAYS_MS, OUTCOME_NOT_STORED } from '../../src/runtime/run-end.ts';
import { createRunRecorder, type RunRepository } from '../../src/runtime/run-recorder.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { collect, lastEvent, RUN_AGENT, scriptedConfiguration, wsClient } from '../helpers/runs.ts';
import type { FakeServer, Scripted } from '../fixtures/wires/fake-server.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import { eventually, RawSocket, type WireMessage } from '../protocol/raw-socket.ts';

/** Faults mid-run: a failing provider, a database that drops its connections, a client that stops reading. */

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const PROVIDER_TIMEOUT_MS = 400;
const GENERIC_FAILURE = 'The model provider failed to answer; see the server log.';

const STORED_STEPS = `query($id: ID!) { run(id: $id) { status terminationReason errorMessage auditIncomplete iterations
  steps(first: 100) { edges { node { sequence kind round } } } } }`;

describe.each(TEST_DATABASES)('faults on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let vendor: FakeServer;
  let configurationId: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: PROBES } });
    url = (await t.app.server.start()).url;
    vendor = await openaiWire.start();
    const provider = await t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ... on Provider { id } } }`, {
      input: { name: 'flaky', kind: 'OPENAI', baseUrl: openaiWire.baseUrl(vendor), apiKey: 'key-flaky-0123456789', settings: { timeoutMs: PROVIDER_TIMEOUT_MS } },
    });
    const model = await t.gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
      input: { providerId: provider.data.createProvider.id, name: 'flaky-model', providerModelId: 'gpt-flaky', inputPricePerMTok: 1, outputPricePerMTok: 2 },
    });
    const configuration = await t.gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } } }`, {
      input: { name: 'flaky', modelId: model.data.createModel.id, privacyLevel: 'FULL' },
    });
    configurationId = configuration.data.createConfiguration.id;
  });
  afterAll(async () => {
    await vendor?.close();
    await t?.stop();
  });

  const storedSteps = async (runId: string) => (await t.gql(STORED_STEPS, { id: runId })).data.run;

  describe('provider failures mid-run', () => {
    it.each<[string, Scripted]>([
      ['a 500', { status: 500 }],
      ['a 429', { status: 429, body: '{"error":{"message":"Rate limit reached","type":"requests"}}' }],
      ['a body that is not JSON', { raw: '<html><body>502 Bad Gateway</body></html>' }],
      ['JSON that is not a completion', { raw: '{"object":"chat.completion","choices":[]}' }],
      [`nothing within timeoutMs (${PROVIDER_TIMEOUT_MS} ms)`, { hang: true }],
    ])('should settle FAILED / PROVIDER_FAILED when the provider answers %s, with the steps so far stored in order', async (_label, fault) => {
      vendor.reset();
      vendor.enqueue({ reply: { content: 'Looking.', toolCalls: [{ name: 'describe_tables', arguments: {} }] } }, fault);
      const client = wsClient(url, t.adminToken);
      try {
        const started = Date.now();
        const events = await collect(client, RUN_AGENT, { input: { configurationId, prompt: 'what tables?' } });
        const elapsed = Date.now() - started;
        const finished = lastEvent(events, 'RunFinishedEvent').run;
        expect(finished).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED', errorMessage: GENERIC_FAILURE });
        if ('hang' in fault) expect(elapsed).toBeGreaterThanOrEqual(PROVIDER_TIMEOUT_MS);
        expect(elapsed).toBeLessThan(PROVIDER_TIMEOUT_MS + 5_000);
        const live = events.filter((event) => event.__typename === 'RunStepEvent').map((event) => `${event.step.sequence}:${event.step.kind}`);
        const stored = await storedSteps(finished.id);
        expect(stored).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED', errorMessage: GENERIC_FAILURE, auditIncomplete: false, iterations: 1 });
        const rows = stored.steps.edges.map((edge: any) => `${edge.node.sequence}:${edge.node.kind}`);
        expect(rows).toEqual(['1:REQUEST', '2:LLM', '3:TOOL', '4:REQUEST']);
        expect(live).toEqual(rows);
        expect(vendor.requests).toHaveLength(2);
      } finally {
        await client.dispose();
      }
    });
  });

  // Only a PostgreSQL server has backends to terminate; PGlite runs in-process.
  if (kind === 'postgres') describe('database connections terminated mid-run', () => {
    it('should not crash, settle every run, and store no step twice or out of order', async () => {
      const looping = await scriptedConfiguration(t, 'terminated', {
        replies: [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }, { name: 'list_configurations', arguments: {} }] }],
        finalReply: { content: 'done' },
        delayMs: 15,
        maxIterations: 12,
        privacyLevel: 'FULL',
      });
      const admin = new pg.Client({ connectionString: t.database.databaseUrl! });
      await admin.connect();
      const sockets = await Promise.all(Array.from({ length: 4 }, () => RawSocket.open(url, t.adminToken)));
      let terminated = 0;
      let running = true;
      let terminator: Promise<void> = Promise.resolve();
      try {
        // Connected and started first: the faults hit runs in flight, not the handshake.
        const runIds: string[] = [];
        for (const [index, socket] of sockets.entries()) {
          socket.subscribe('run', RUN_AGENT, { input: { configurationId: looping, prompt: `survive ${index}` } });
          runIds.push(eventOf(await socket.next((message) => message.id === 'run')).run.id);
        }
        const streams = sockets.map((socket) => socket.operation('run', 30_000));
        // An outage of ~400 ms: every connection of the app's database killed every 10 ms.
        const outageEnds = Date.now() + 400;
        terminator = (async () => {
          while (running && Date.now() < outageEnds) {
            const result = await admin.query(
              'select pg_terminate_backend(pid) as killed from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
            );
            terminated += result.rows.filter((row) => row.killed).length;
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        })();
        await terminator;
        const results = await Promise.all(streams);
        expect(terminated).toBeGreaterThan(0);
        let incomplete = 0;
        for (const [index, messages] of results.entries()) {
          const last = messages.at(-1)!;
          const events = messages.filter((message) => message.type === 'next').map(eventOf);
          // A stream whose own reads fail ends with the masked error (runEvents can pick it up again).
          if (last.type === 'error') expect(last.payload).toEqual([expect.objectContaining({ message: 'Unexpected error.' })]);
          else expect(events.at(-1).__typename).toBe('RunFinishedEvent');
          const live: number[] = events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step.sequence);
          expect(live).toEqual(Array.from({ length: live.length }, (_, position) => position + 1));
          const stored = await eventually(() => storedSteps(runIds[index]!), (run) => run.status !== 'RUNNING', 5_000);
          expect(['COMPLETED', 'FAILED']).toContain(stored.status);
          const sequences: number[] = stored.steps.edges.map((edge: any) => edge.node.sequence);
          for (let position = 1; position < sequences.length; position++) expect(sequences[position]).toBeGreaterThan(sequences[position - 1]!);
          for (const sequence of sequences) expect(live).toContain(sequence);
          // A gap is allowed only where a write failed, and then the run says its audit is incomplete.
          if (sequences.length !== live.length) {
            incomplete += 1;
            expect(stored.auditIncomplete).toBe(true);
          }
        }
        const duplicates = await admin.query('select run_id, sequence, count(*) from run_steps group by run_id, sequence having count(*) > 1');
        expect(duplicates.rows).toEqual([]);
        console.log(`terminated ${terminated} backends during 4 runs; ${incomplete} run(s) lost a write and say so`);
        expect((await t.gql('{ viewer { name } }')).data.viewer.name).toBe('admin');
      } finally {
        running = false;
        await terminator.catch(() => undefined);
        await admin.end();
        for (const socket of sockets) await socket.close();
      }
    }, 60_000);
  });

  describe('a client that stops reading', () => {
    it('should neither hold the run back nor buffer without bound, and deliver everything once it reads again', async () => {
      // 14 rounds, each returning 3 × 50 000 bytes; every REQUEST step carries the whole transcript
      // to an admin, so the live stream is ~16 MB: more than the kernel takes in for a reader that
      // does not read (a receive window grows only as its application reads).
      const large = { name: 'probe_large', arguments: { bytes: 50_000 } };
      const heavy = await scriptedConfiguration(t, 'heavy', {
        replies: [{ content: '', toolCalls: [large, large, large] }],
        finalReply: { content: 'heavy done' },
        maxIterations: 14,
        privacyLevel: 'METADATA',
      });
      const serverSockets: Socket[] = [];
      const onConnection = (socket: Socket) => serverSockets.push(socket);
      t.app.server.http.on('connection', onConnection);
      const before = t.app.services.bus.subscriberCount();
      const reader = await RawSocket.open(url, t.adminToken);
      t.app.server.http.off('connection', onConnection);
      const serverSide = serverSockets.find((socket) => socket.remotePort === (reader.socket as any)._socket.localPort)!;
      expect(serverSide).toBeDefined();
      try {
        reader.subscribe('heavy', `subscription($input: RunAgentInput!) { runAgent(input: $input) { __typename
          ... on RunStartedEvent { run { id } }
          ... on RunStepEvent { step { sequence kind messagesSent toolResult } }
          ... on RunFinishedEvent { run { id status } } } }`, { input: { configurationId: heavy, prompt: 'flood me' } });
        const runId = eventOf(await reader.next((message) => message.id === 'heavy')).run.id;
        reader.socket.pause();
        const heapBefore = process.memoryUsage().heapUsed;
        // The run finishes while nobody reads its stream, and the server answers meanwhile.
        const settled = await eventually(async () => (await t.gql(STORED_STEPS, { id: runId })).data.run, (run) => run.status !== 'RUNNING', 20_000);
        expect(settled.status).toBe('COMPLETED');
        expect((await t.gql('{ viewer { name } }')).data.viewer.name).toBe('admin');
        // The kernel buffers are full and a frame waits in user space; graphql-ws sends the next one
        // only once it drained, so that is all that waits there (the rest stays in the bus queue).
        const pending = serverSide.writableLength;
        const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
        console.log(`slow consumer: ${pending} bytes waiting in the server's socket, heap growth ${(heapGrowth / 1e6).toFixed(1)} MB`);
        expect(pending).toBeGreaterThan(0);
        expect(pending).toBeLessThan(4e6);

        reader.socket.resume();
        const messages = await reader.operation('heavy', 30_000);
        expect(messages.at(-1)!.type).toBe('complete');
        const events = messages.filter((message) => message.type === 'next').map(eventOf);
        expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
        const live = events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step.sequence);
        const stored = (await t.gql(STORED_STEPS, { id: runId })).data.run.steps.edges.map((edge: any) => edge.node.sequence);
        expect(live).toEqual(stored);
        expect(stored).toEqual(Array.from({ length: stored.length }, (_, index) => index + 1));
        await eventually(() => t.app.services.bus.subscriberCount(), (count) => count === before);
      } finally {
        await reader.close();
      }
    }, 60_000);
  });
});

describe('the closing writes of a run during a database outage', () => {
  const outcome: RunOutcome = {
    status: 'COMPLETED',
    terminationReason: 'COMPLETED',
    truncated: false,
    iterations: 1,
    finalContent: 'done',
    usage: { promptTokens: 1, completionTokens: 1, cost: 0 },
    errorMessage: null,
  };
  const step: RunStep = {
    kind: 'LLM',
    round: 1,
    content: 'thinking',
    thinking: null,
    requestedToolCalls: [],
    usage: { promptTokens: 1, completionTokens: 1, cost: 0 },
    finishReason: 'stop',
    durationMs: 1,
  };
  const quietLogger = { warn: () => undefined, error: () => undefined };

  /**
   * A repository whose every write fails while `down` is true; with `outcomeRejected`, storing the
   * outcome as reported always fails (as an out-of-range total would), the rest works.
   */
  function flakyRepository(options: { outcomeRejected?: boolean } = {}) {
    const state = { down: true, settleAttempts: 0, settled: 0, settledWithoutOutcome: 0, flagged: 0, steps: 0 };
    const fail = () => Promise.reject(new Error('terminating connection due to administrator command'));
    const repository: RunRepository = {
      insertStep: () => (state.down ? fail() : Promise.resolve(void (state.steps += 1))),
      settle: () => {
        state.settleAttempts += 1;
        if (options.outcomeRejected) return Promise.reject(new Error('integer out of range'));
        return state.down ? fail() : Promise.resolve(((state.settled += 1), { status: 'COMPLETED' }));
      },
      settleWithoutOutcome: (_runId, outcome, errorMessage) =>
        state.down ? fail() : Promise.resolve(((state.settledWithoutOutcome += 1), { status: outcome.status, errorMessage })),
      markAuditIncomplete: () => (state.down ? fail() : Promise.resolve(void (state.flagged += 1))),
    };
    return { state, repository };
  }
  /** Every event the bus publishes for the run, as it comes. */
  const eventsOf = (bus: ReturnType<typeof createRunEventBus>, runId: string) => {
    const seen: RunBusEvent[] = [];
    void (async () => {
      for await (const event of bus.subscribe(runId)) seen.push(event);
    })();
    return seen;
  };

  it('should retry settling until the database is back, and store the incomplete-audit flag it could not store earlier', async () => {
    const { state, repository } = flakyRepository();
    const recorder = createRunRecorder({ runId: 'r', level: 'FULL', repository, bus: createRunEventBus(), logger: quietLogger, retryDelaysMs: [5, 5, 5, 5, 5, 5] });
    await recorder.recordStep(step);
    await recorder.flushed();
    expect(recorder.auditIncomplete).toBe(true);
    expect(state.flagged).toBe(0);
    setTimeout(() => (state.down = false), 12);
    expect(await recorder.settle(outcome)).toBe(true);
    expect(state.settleAttempts).toBeGreaterThan(1);
    expect(state).toMatchObject({ settled: 1, flagged: 1 });
  });

  it('should store the end of a run whose outcome storage rejects, keeping its status, and publish that row', async () => {
    const { state, repository } = flakyRepository({ outcomeRejected: true });
    state.down = false;
    const bus = createRunEventBus();
    const seen = eventsOf(bus, 'r');
    const log: string[] = [];
    const recorder = createRunRecorder({
      runId: 'r',
      level: 'FULL',
      repository,
      bus,
      logger: { warn: () => undefined, error: (_o, msg) => void log.push(msg ?? '') },
      retryDelaysMs: [1, 1],
    });
    expect(await recorder.settle(outcome)).toBe(true);
    expect(state).toMatchObject({ settleAttempts: 3, settledWithoutOutcome: 1 });
    expect(recorder.auditIncomplete).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([{ type: 'finished', runId: 'r', finalContent: outcome.finalContent, run: { status: outcome.status, errorMessage: OUTCOME_NOT_STORED }, publishedAt: expect.any(Number) }]);
    expect(log).toContain('could not store the run outcome; storing its end without it');
  });

  it('should keep trying while the database is away, then store the real outcome', async () => {
    const { state, repository } = flakyRepository();
    const recorder = createRunRecorder({ runId: 'r', level: 'FULL', repository, bus: createRunEventBus(), logger: quietLogger, retryDelaysMs: [1], settleRetryIntervalMs: 5 });
    setTimeout(() => (state.down = false), 60);
    expect(await recorder.settle(outcome)).toBe(true);
    expect(state).toMatchObject({ settled: 1, settledWithoutOutcome: 0 });
    expect(state.settleAttempts).toBeGreaterThan(4);
  });

  it('should publish no finished event for a run still RUNNING in storage when the server stops first', async () => {
    const { state, repository } = flakyRepository();
    const bus = createRunEventBus();
    const seen = eventsOf(bus, 'r');
    const stop = new AbortController();
    const recorder = createRunRecorder({ runId: 'r', level: 'FULL', repository, bus, logger: quietLogger, retryDelaysMs: [1], settleRetryIntervalMs: 60_000, stopSignal: stop.signal });
    const settled = recorder.settle(outcome);
    setTimeout(() => stop.abort(), 20);
    expect(await settled).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    expect(state).toMatchObject({ settled: 0, settledWithoutOutcome: 0 });
  });

  it('should wait about 3 seconds in all by default', () => {
    const total = CLOSING_WRITE_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThanOrEqual(2_000);
    expect(total).toBeLessThanOrEqual(5_000);
  });
});

function eventOf(message: WireMessage): any {
  return message.payload.data.runAgent;
}

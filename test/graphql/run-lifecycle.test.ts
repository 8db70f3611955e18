import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeIdFor } from '../../src/global-id.ts';
import type { RunBusEvent } from '../../src/runtime/events.ts';
import { toActor } from '../../src/services/users.ts';
import { graphql, type DocumentType } from '../gql/gql.ts';
import type { RunStatus } from '../gql/graphql.ts';
import type { TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member, textOf } from '../helpers/documents.ts';
import { collect, lastEvent, RUN_AGENT, RUN_EVENTS, scriptedConfiguration, stepsOf, wsClient, type RunEvent } from '../helpers/runs.ts';
import { startServedApp } from '../helpers/served-app.ts';

const LOOPING = [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }];

const RUN_STATUS = graphql(`
  query RunLifecycleStatus($id: ID!) { run(id: $id) { status terminationReason iterations } }
`);
const CANCEL_RUN = graphql(`
  mutation RunLifecycleCancel($id: ID!) { cancelRun(id: $id) { __typename ... on Run { id } } }
`);
const CREATE_USER = graphql(`
  mutation RunLifecycleCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }
`);
const STORED_STEPS = graphql(`
  query RunLifecycleStoredSteps($id: ID!) { run(id: $id) { steps(first: 50) { edges { node { sequence kind } } } } }
`);

async function waitForStatus(t: TestApp, runId: string, status: RunStatus): Promise<DocumentType<typeof RUN_STATUS>['run']> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await t.gql(RUN_STATUS, { id: runId });
    if (result.data?.run?.status === status || Date.now() > deadline) return result.data!.run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(TEST_DATABASES)('run lifecycle on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let slow: string;
  let fast: string;

  beforeAll(async () => {
    ({ t, url, configurations: { slow, fast } } = await startServedApp(kind, {
      slow: { replies: LOOPING, delayMs: 150, maxIterations: 20, privacyLevel: 'FULL' },
      fast: { replies: [{ content: 'x', toolCalls: [{ name: 'describe_tables', arguments: {} }] }, { content: 'done' }], privacyLevel: 'METADATA' },
    }));
  });
  afterAll(() => t.stop());

  /** Starts a slow run and resolves with its id once the first step arrived; `stop` ends the subscription. */
  function startSlowRun(client: ReturnType<typeof wsClient>) {
    const events: (RunEvent | undefined)[] = [];
    let stop!: () => void;
    const firstStep = new Promise<string>((resolve, reject) => {
      let runId = '';
      stop = client.subscribe<DocumentType<typeof RUN_AGENT>>(
        { query: textOf(RUN_AGENT), variables: { input: { configurationId: slow, prompt: 'loop' } } },
        {
          next: (result) => {
            const event = result.data?.runAgent;
            events.push(event);
            if (event?.__typename === 'RunStartedEvent') runId = event.run.id;
            if (event?.__typename === 'RunStepEvent') resolve(runId);
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    return { firstStep, events, stop: () => stop() };
  }

  it('should cancel a run whose client completes the subscription', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const run = startSlowRun(client);
      const runId = await run.firstStep;
      run.stop();
      expect(await waitForStatus(t, runId, 'CANCELLED')).toMatchObject({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
    } finally {
      await client.dispose();
    }
  });

  it('should cancel a run whose client disconnects', async () => {
    const client = wsClient(url, t.adminToken);
    const run = startSlowRun(client);
    const runId = await run.firstStep;
    await client.dispose();
    expect(await waitForStatus(t, runId, 'CANCELLED')).toMatchObject({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
  });

  it('should cancel a run from anywhere with cancelRun, and finish the original stream', async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const run = startSlowRun(client);
      const runId = await run.firstStep;
      const cancelled = await t.gql(CANCEL_RUN, { id: runId });
      expect(cancelled.data!.cancelRun).toEqual({ __typename: 'Run', id: runId });
      const final = await waitForStatus(t, runId, 'CANCELLED');
      expect(final!.status).toBe('CANCELLED');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(run.events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'CANCELLED' } });
    } finally {
      await client.dispose();
    }
  });

  it("should refuse cancelRun on someone else's run", async () => {
    const user = member((await t.gql(CREATE_USER, { name: `other-${kind}` })).data?.createUser, 'CreateUserPayload');
    const client = wsClient(url, t.adminToken);
    try {
      const run = startSlowRun(client);
      const runId = await run.firstStep;
      const denied = await t.gql(CANCEL_RUN, { id: runId }, user.token);
      expect(denied.data!.cancelRun.__typename).toBe('NotFoundError');
      run.stop();
    } finally {
      await client.dispose();
    }
  });

  it('should let a second dashboard join mid-run: replay then live, no gap, no duplicate', async () => {
    const first = wsClient(url, t.adminToken);
    const second = wsClient(url, t.adminToken);
    try {
      const configuration = await scriptedConfiguration(t, `join-${Date.now()}`, {
        replies: [...Array.from({ length: 4 }, () => LOOPING[0]), { content: 'finished' }],
        delayMs: 100,
        privacyLevel: 'FULL',
      });
      let announce!: (id: string) => void;
      const announced = new Promise<string>((resolve) => (announce = resolve));
      const original: RunEvent[] = [];
      const whole = new Promise<void>((resolve, reject) => {
        first.subscribe<DocumentType<typeof RUN_AGENT>>(
          { query: textOf(RUN_AGENT), variables: { input: { configurationId: configuration, prompt: 'go' } } },
          {
            next: (result) => {
              const event = result.data!.runAgent;
              original.push(event);
              if (event.__typename === 'RunStartedEvent') announce(event.run.id);
            },
            error: reject,
            complete: resolve,
          },
        );
      });
      const runId = await announced;
      await new Promise((resolve) => setTimeout(resolve, 250));
      const joined = await collect(second, RUN_EVENTS, { runId });
      await whole;
      const sequences = (events: RunEvent[]) => stepsOf(events).map((step) => step.sequence);
      expect(sequences(joined)).toEqual(sequences(original));
      expect(sequences(joined)).toEqual(Array.from({ length: sequences(original).length }, (_, index) => index + 1));
      expect(joined.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    } finally {
      await first.dispose();
      await second.dispose();
    }
  });

  it('should finish 50 concurrent runs from 50 clients with complete, ordered stored steps', async () => {
    const clients = Array.from({ length: 50 }, () => wsClient(url, t.adminToken));
    try {
      const results = await Promise.all(clients.map((client, index) => collect(client, RUN_AGENT, { input: { configurationId: fast, prompt: `run ${index}` } })));
      const runIds = results.map((events) => lastEvent(events, 'RunFinishedEvent').run.id);
      expect(new Set(runIds).size).toBe(50);
      for (const events of results) expect(lastEvent(events, 'RunFinishedEvent').run).toMatchObject({ status: 'COMPLETED', iterations: 2 });
      for (const runId of runIds) {
        const stored = await t.gql(STORED_STEPS, { id: runId });
        expect(stored.data!.run!.steps.edges.map((edge) => `${edge.node.sequence}:${edge.node.kind}`)).toEqual(['1:REQUEST', '2:LLM', '3:TOOL', '4:REQUEST', '5:LLM']);
      }
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  }, 60_000);

  it('should hand every finished stream the row this process settled, in the finished event itself', async () => {
    const { runHost, db } = t.app.services;
    const admin = toActor(await db.selectFrom('users').selectAll().where('is_admin', '=', true).executeTakeFirstOrThrow());
    const started = await runHost.start(admin, { configurationId: decodeIdFor('Configuration', fast), prompt: 'settled here' });
    let finished: Extract<RunBusEvent<unknown>, { type: 'finished' }> | undefined;
    for await (const event of started.events) {
      if (event.type === 'finished') {
        finished = event;
        break;
      }
    }
    // The row as settled travels with the event (no stream reloads it); the live answer beside it.
    expect(finished?.run).toMatchObject({ id: started.run.id, status: 'COMPLETED', iterations: 2, final_content: null });
    expect(finished?.finalContent).toBe('done');
    // The initiator's stream still receives the live final answer that METADATA does not store.
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId: fast, prompt: 'settled here too' } });
      expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED', iterations: 2, finalContent: 'done' } });
    } finally {
      await client.dispose();
    }
  });
});

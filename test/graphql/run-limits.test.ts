import { decodeGlobalID } from '@pothos/plugin-relay';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, vendorConfiguration, wsClient, type RunEvent } from '../helpers/runs.ts';
import { startFakeServer, type FakeServer } from '../fixtures/wires/fake-server.ts';
import { encodeOpenAi } from '../fixtures/wires/openai.ts';
import { eventually } from '../protocol/raw-socket.ts';

/**
 * The limits on what runs may do at once, over the wire a dashboard uses (graphql-ws): a request
 * budget that concurrent runs cannot overshoot, and the cap on RUNNING runs per user. The fake
 * provider HOLDS every call until the test releases it, so the calls are really in flight together.
 */

const CAP = 12;

/** What one runAgent subscription ended with: its events, or the errors it was refused with. */
interface Outcome {
  readonly events: RunEvent[];
  readonly errors: { message: string; extensions?: { code?: string } }[];
}

function runAgent(client: Client, configurationId: string, prompt: string, onEvent: (event: RunEvent) => void = () => undefined): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const events: RunEvent[] = [];
    const errors: Outcome['errors'] = [];
    client.subscribe(
      { query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt } } },
      {
        next: (result) => {
          if (result.errors) errors.push(...(result.errors as unknown as Outcome['errors']));
          if (result.data) {
            const event = (result.data as { runAgent: RunEvent }).runAgent;
            events.push(event);
            onEvent(event);
          }
        },
        error: (error) => (Array.isArray(error) ? resolve({ events, errors: [...errors, ...error] }) : reject(error)),
        complete: () => resolve({ events, errors }),
      },
    );
  });
}

const finishedRun = (outcome: Outcome) => {
  const last = outcome.events.at(-1);
  return last?.__typename === 'RunFinishedEvent' ? last.run : null;
};

/** A gate the fake provider's replies wait on. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe.each(TEST_DATABASES)('limits on concurrent runs on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let provider: FakeServer;
  let configurationId: string;

  const createUser = async (name: string) => {
    const created = await t.gql(`mutation($name: String!) { createUser(input: { name: $name }) { ... on CreateUserPayload { token user { id } } } }`, { name });
    return created.data.createUser as { token: string; user: { id: string } };
  };
  const runRowsOf = async (globalUserId: string) => {
    return t.app.services.db.selectFrom('runs').select(['id', 'status']).where('user_id', '=', decodeGlobalID(globalUserId).id).execute();
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_MAX_RUNNING_RUNS_PER_USER: String(CAP) } });
    url = (await t.app.server.start()).url;
    provider = await startFakeServer(encodeOpenAi);
    configurationId = await vendorConfiguration(t, 'held-configuration', `${provider.url}/v1`);
  });
  afterAll(async () => {
    await provider.close();
    await t.stop();
  });
  beforeEach(() => provider.reset());

  it('should make exactly 3 provider calls when a user with maxRequests 3 a day starts 12 runs at once, and end the other 9 BUDGET_EXHAUSTED', async () => {
    const user = await createUser('twelve-at-once');
    const budget = await t.gql(`mutation($input: SetBudgetInput!) { setBudget(input: $input) { __typename } }`, {
      input: { subjectId: user.user.id, period: 'DAILY', maxRequests: 3 },
    });
    expect(budget.data.setBudget.__typename).toBe('Budget');
    const held = gate();
    provider.enqueue(...Array.from({ length: 12 }, () => ({ reply: { content: 'answered' }, after: held.opened })));
    const client = wsClient(url, user.token);
    try {
      let finished = 0;
      const outcomes = Array.from({ length: 12 }, (_, index) =>
        runAgent(client, configurationId, `run ${index}`, (event) => void (event.__typename === 'RunFinishedEvent' && (finished += 1))),
      );
      // Every run either holds a call at the provider or has ended: only then are the calls released.
      await eventually(() => provider.requests.length + finished, (settledOrInFlight) => settledOrInFlight === 12, 30_000);
      expect(provider.requests).toHaveLength(3);
      held.open();
      const runs = (await Promise.all(outcomes)).map(finishedRun);
      expect(provider.requests).toHaveLength(3);
      expect(runs.filter((run) => run?.status === 'COMPLETED' && run.terminationReason === 'COMPLETED')).toHaveLength(3);
      const denied = runs.filter((run) => run?.terminationReason === 'BUDGET_EXHAUSTED');
      expect(denied).toHaveLength(9);
      for (const run of denied) expect(run).toMatchObject({ status: 'FAILED', iterations: 0, errorMessage: 'The budget does not allow another provider call.' });
    } finally {
      held.open();
      await client.dispose();
    }
  }, 60_000);

  it(`should start exactly ${CAP} of 20 runs started at once by one user, refuse the others with RUN_LIMIT_REACHED and store nothing for them`, async () => {
    const user = await createUser('twenty-at-once');
    const held = gate();
    provider.enqueue(...Array.from({ length: CAP }, () => ({ reply: { content: 'answered' }, after: held.opened })));
    const client = wsClient(url, user.token);
    try {
      let refused = 0;
      const outcomes = Array.from({ length: 20 }, (_, index) =>
        runAgent(client, configurationId, `start ${index}`).then((outcome) => ((refused += outcome.errors.length > 0 ? 1 : 0), outcome)),
      );
      await eventually(() => provider.requests.length + refused, (settledOrInFlight) => settledOrInFlight === 20, 30_000);
      expect(provider.requests).toHaveLength(CAP);
      const stored = await runRowsOf(user.user.id);
      expect(stored).toHaveLength(CAP);
      expect(stored.every((run) => run.status === 'RUNNING')).toBe(true);
      held.open();
      const results = await Promise.all(outcomes);
      const rejected = results.filter((outcome) => outcome.errors.length > 0);
      expect(rejected).toHaveLength(20 - CAP);
      for (const outcome of rejected) {
        expect(outcome.events).toEqual([]);
        expect(outcome.errors).toEqual([
          expect.objectContaining({
            message: `You already have ${CAP} running runs, the most one user may have at once; wait for one to finish or cancel one (cancelRun), then start again.`,
            extensions: expect.objectContaining({ code: 'RUN_LIMIT_REACHED' }),
          }),
        ]);
      }
      expect(results.map(finishedRun).filter((run) => run?.status === 'COMPLETED')).toHaveLength(CAP);
      expect(await runRowsOf(user.user.id)).toHaveLength(CAP);
      // Finished runs no longer count: the user may start again.
      provider.enqueue({ reply: { content: 'again' } });
      const again = await runAgent(client, configurationId, 'after the others finished');
      expect(again.errors).toEqual([]);
      expect(finishedRun(again)).toMatchObject({ status: 'COMPLETED', finalContent: 'again' });
    } finally {
      held.open();
      await client.dispose();
    }
  }, 60_000);
  it('should count the RUNNING runs of every process, and not the runs waiting for approval', async () => {
    const user = await createUser('elsewhere');
    const userId = Buffer.from(user.user.id, 'base64').toString('utf8').split(':')[1]!;
    const stored = (status: 'RUNNING' | 'WAITING_FOR_APPROVAL') =>
      Array.from({ length: CAP }, () => ({ id: crypto.randomUUID(), configuration_id: null, user_id: userId, status, prompt: null, privacy_level: 'METADATA' as const }));
    const client = wsClient(url, user.token);
    try {
      // CAP runs waiting for a human hold nothing: a new run starts.
      await t.app.services.db.insertInto('runs').values(stored('WAITING_FOR_APPROVAL')).execute();
      provider.enqueue({ reply: { content: 'started' } });
      expect(finishedRun(await runAgent(client, configurationId, 'beside waiting runs'))).toMatchObject({ status: 'COMPLETED' });
      // CAP runs driven by another process (rows RUNNING in the shared database) fill the cap.
      await t.app.services.db.insertInto('runs').values(stored('RUNNING')).execute();
      const refused = await runAgent(client, configurationId, 'beside running runs');
      expect(refused.errors.map((error) => error.extensions?.code)).toEqual(['RUN_LIMIT_REACHED']);
      expect(provider.requests).toHaveLength(1);
      expect(await runRowsOf(user.user.id)).toHaveLength(2 * CAP + 1);
    } finally {
      await client.dispose();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRun } from '../../src/db/repositories/runs.ts';
import { encodeGlobalId } from '../../src/global-id.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/instances.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration, wsClient } from '../helpers/runs.ts';

const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } } }`;
const CREATE_USER = `mutation { createUser(input: { name: "owner" }) { ... on CreateUserPayload { token user { id } } } }`;

const CONTENTS = `subscription($id: ID!) { runEvents(runId: $id) { __typename ... on RunStepEvent { step { sequence kind content } } ... on RunFinishedEvent { run { status } } } }`;
const KINDS = `subscription($id: ID!) { runEvents(runId: $id) { __typename ... on RunStepEvent { step { sequence kind } } } }`;

type Received = { data?: { runEvents: { __typename: string; step?: { sequence: number; kind: string; content?: string | null } } }; errors?: { extensions: { code: string } }[] };

/**
 * Subscribers of one run share one execution per event and audience (graphql/plugins/shared-execution.ts):
 * what each receives must still be exactly what its own execution would give — its privacy view,
 * its fields, and the response-size refusal for every one of them.
 */
describe.each(TEST_DATABASES)('shared execution of run events on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let owner: { token: string; user: { id: string } };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_MAX_RESPONSE_BYTES: '4096' } });
    url = (await t.app.server.start()).url;
    owner = (await t.gql(CREATE_USER)).data.createUser;
  });
  afterAll(() => t?.stop());

  async function watch(configurationId: string, audiences: { token: string; query: string }[]) {
    const started = (await t.gql(START_RUN, { input: { configurationId, prompt: 'go' } }, owner.token)).data.startRun;
    const clients = audiences.map(({ token }) => wsClient(url, token));
    try {
      // Every result, data or errors (an oversized event is an error result and the stream goes on).
      return await Promise.all(
        clients.map(
          (client, index) =>
            new Promise<Received[]>((resolve, reject) => {
              const received: Received[] = [];
              client.subscribe(
                { query: audiences[index]!.query, variables: { id: started.id } },
                { next: (result) => void received.push(result as Received), error: reject, complete: () => resolve(received) },
              );
            }),
        ),
      );
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  }

  it('should give each audience its own view: admins the verbatim steps, the owner the filtered copy, another document its own fields', async () => {
    // The step must reach every subscriber live (a replayed step is the stored, filtered copy for
    // everyone): the run is one nobody drives, and its step is published only once every
    // subscription has its first event (a real run raced the subscriptions on a loaded machine).
    const run = await insertRun(t.app.services.db, {
      id: randomUUID(),
      configuration_id: null,
      user_id: decodeGlobalID(owner.user.id).id,
      status: 'RUNNING',
      prompt: 'go',
      privacy_level: 'METADATA',
      tool_selection: null,
    });
    const audiences = [
      { token: t.adminToken, query: CONTENTS },
      { token: t.adminToken, query: CONTENTS },
      { token: owner.token, query: CONTENTS },
      { token: owner.token, query: CONTENTS },
      { token: t.adminToken, query: KINDS },
    ];
    const clients = audiences.map(({ token }) => wsClient(url, token));
    try {
      const received = audiences.map(() => [] as Received[]);
      const done = audiences.map(
        ({ query }, index) =>
          new Promise<void>((resolve, reject) => {
            clients[index]!.subscribe(
              { query, variables: { id: encodeGlobalId('Run', run.id) } },
              { next: (result) => void received[index]!.push(result as Received), error: reject, complete: resolve },
            );
          }),
      );
      await eventually(async () => received.every((events) => events.length > 0), Boolean, 'every subscription to have its first event', 60_000);
      const full = { kind: 'LLM', round: 1, durationMs: 3, content: 'secret plan', contentRedacted: false, contentLength: 11 } as const;
      const { content: _hidden, ...filtered } = { ...full, contentRedacted: true };
      const progress = { iterations: 1, usage: { promptTokens: 1, completionTokens: 1, cost: 0 } };
      t.app.services.bus.publish({ type: 'step', runId: run.id, sequence: 1, stateVersion: run.state_version, progress, full, filtered });
      t.app.services.bus.publish({ type: 'finished', runId: run.id, finalContent: null, run: { ...run, status: 'COMPLETED' } });
      await Promise.all(done);
      const [admin1, admin2, owner1, owner2, kinds] = received;
      const llm = (events: Received[]) => events.map((event) => event.data?.runEvents.step).filter((step) => step?.kind === 'LLM');
      expect(llm(admin1!).map((step) => step!.content)).toEqual(['secret plan']);
      expect(admin2).toEqual(admin1);
      expect(llm(owner1!).map((step) => step!.content)).toEqual([null]);
      expect(owner2).toEqual(owner1);
      expect(llm(kinds!)).toEqual([{ sequence: 1, kind: 'LLM' }]);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });

  it('should refuse an event over AIRLOCK_MAX_RESPONSE_BYTES for every subscriber that shares its execution', async () => {
    const configurationId = await scriptedConfiguration(t, 'large', { replies: [{ content: 'x'.repeat(6_000), toolCalls: [] }], delayMs: 300, privacyLevel: 'FULL' });
    const streams = await watch(configurationId, [1, 2, 3].map(() => ({ token: t.adminToken, query: CONTENTS })));
    for (const events of streams) {
      const shapes = events.map((event) => event.errors?.[0]?.extensions.code ?? `${event.data!.runEvents.__typename}:${event.data!.runEvents.step?.kind ?? ''}`);
      expect(shapes).toContain('RESPONSE_TOO_LARGE');
      expect(shapes).not.toContain('RunStepEvent:LLM');
      expect(shapes.at(-1)).toBe('RunFinishedEvent:');
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
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
  let owner: { token: string };

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
    const configurationId = await scriptedConfiguration(t, 'views', { replies: [{ content: 'secret plan', toolCalls: [] }], delayMs: 300, privacyLevel: 'METADATA' });
    const [admin1, admin2, owner1, owner2, kinds] = await watch(configurationId, [
      { token: t.adminToken, query: CONTENTS },
      { token: t.adminToken, query: CONTENTS },
      { token: owner.token, query: CONTENTS },
      { token: owner.token, query: CONTENTS },
      { token: t.adminToken, query: KINDS },
    ]);
    const llm = (events: Received[]) => events.map((event) => event.data?.runEvents.step).filter((step) => step?.kind === 'LLM');
    expect(llm(admin1!).map((step) => step!.content)).toEqual(['secret plan']);
    expect(admin2).toEqual(admin1);
    expect(llm(owner1!).map((step) => step!.content)).toEqual([null]);
    expect(owner2).toEqual(owner1);
    expect(llm(kinds!)).toEqual([{ sequence: expect.any(Number), kind: 'LLM' }]);
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

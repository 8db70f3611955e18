import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, scriptedConfiguration, sseEvents } from '../helpers/runs.ts';

/** Token counts are safe integers at the provider boundary; a run's totals may pass GraphQL's 32-bit Int. */
const HUGE = 3_000_000_000;

describe.each(TEST_DATABASES)('token counts beyond 2^31 on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.stop());

  it('should show a step and a run that used more than 2^31 tokens, exactly', async () => {
    const configurationId = await scriptedConfiguration(t, 'huge', { replies: [{ content: 'a long read', usage: { promptTokens: HUGE, completionTokens: 7 } }] });
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt: 'read it all' } } }),
    });
    const finished = sseEvents(await response.text(), 'runAgent').at(-1);
    expect(finished).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    const { data, errors } = await t.gql(`query($id: ID!) {
      run(id: $id) { usage { promptTokens completionTokens totalTokens } steps(first: 10) { edges { node { kind usage { promptTokens } } } } }
    }`, { id: finished.run.id });
    expect(errors).toBeUndefined();
    expect(data.run.usage).toEqual({ promptTokens: HUGE, completionTokens: 7, totalTokens: HUGE + 7 });
    expect(data.run.steps.edges.map((edge: any) => edge.node).find((step: any) => step.kind === 'LLM').usage).toEqual({ promptTokens: HUGE });
  });
});

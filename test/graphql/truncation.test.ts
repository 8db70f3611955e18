import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { MAX_CONTENT_BYTES, MIDDLE_TRUNCATION_MARKER, TRUNCATION_MARKER } from '../../src/tools/bounds.ts';
import { QUARANTINE_CLOSE, QUARANTINE_OPEN, quarantineOverheadBytes } from '../../src/tools/quarantine.ts';
import { endsContent } from '../fixtures/tool-modules/probes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { collect, CREATE_CONFIGURATION, lastEvent, RUN_AGENT, scriptedConfiguration, stepsOf, wsClient } from '../helpers/runs.ts';

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const RESULT_BYTES = 60_000;
/** One call of a tool whose 60 000-byte result has a recognisable start and end, then an answer. */
const BIG_THEN_ANSWER = [{ toolCalls: [{ name: 'probe_ends', arguments: { bytes: RESULT_BYTES } }] }, { content: 'Read it.' }];

const TRUNCATION_OF = graphql(`
  query TruncationOfConfiguration($id: ID!) { configuration(id: $id) { truncation quarantineToolOutput } }
`);
const SET_TRUNCATION = graphql(`
  mutation TruncationSet($id: ID!, $input: UpdateConfigurationInput!) {
    updateConfiguration(id: $id, input: $input) { __typename ... on Configuration { truncation quarantineToolOutput } ... on Error { message } }
  }
`);
const MODEL_OF = graphql(`
  query TruncationModelOf($id: ID!) { configuration(id: $id) { model { id } } }
`);
const STORED_STEPS = graphql(`
  query TruncationStoredSteps($id: ID!) {
    run(id: $id) { steps(first: 20) { edges { node { kind round toolName toolResult toolResultLength messagesSent } } } }
  }
`);

/** The content a cut keeps of `content` for `cap` bytes: its head, the middle marker, its tail (ASCII, so bytes = units). */
function middleOut(content: string, room: number): string {
  const head = Math.ceil(room / 2);
  return content.slice(0, head) + MIDDLE_TRUNCATION_MARKER + content.slice(content.length - (room - head));
}

describe.each(TEST_DATABASES)('truncation of tool output on %s', (kind) => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: PROBES } });
    url = (await t.app.server.start()).url;
  });
  afterAll(() => t.stop());

  /** A FULL-privacy scripted configuration offering the probes, set to `input` through updateConfiguration. */
  async function configured(name: string, input: { truncation?: 'HEAD' | 'MIDDLE'; quarantineToolOutput?: boolean }): Promise<string> {
    const id = await scriptedConfiguration(t, name, { replies: BIG_THEN_ANSWER, privacyLevel: 'FULL', allowedToolGroups: ['probes'] });
    if (Object.keys(input).length > 0) {
      const updated = await t.gql(SET_TRUNCATION, { id, input });
      expect(member(updated.data?.updateConfiguration, 'Configuration')).toMatchObject(input);
    }
    return id;
  }

  /** Runs over graphql-ws; returns the live TOOL step, and the stored TOOL step and second REQUEST step. */
  async function runOnce(configurationId: string) {
    const client = wsClient(url, t.adminToken);
    try {
      const events = await collect(client, RUN_AGENT, { input: { configurationId, prompt: 'Read the big one.' } });
      const run = lastEvent(events, 'RunFinishedEvent').run;
      expect(run).toMatchObject({ status: 'COMPLETED', finalContent: 'Read it.' });
      const live = stepsOf(events).find((step) => step.kind === 'TOOL')!;
      const stored = (await t.gql(STORED_STEPS, { id: run.id })).data!.run!.steps.edges.map((edge) => edge.node);
      const tool = stored.find((step) => step.kind === 'TOOL')!;
      const request = stored.find((step) => step.kind === 'REQUEST' && step.round === 2)!;
      const sent = (request.messagesSent as { role: string; content: string }[]).filter((message) => message.role === 'tool');
      return { live: live.toolResult, stored: tool.toolResult, sent: sent.map((message) => message.content) };
    } finally {
      await client.dispose();
    }
  }

  it('should default a configuration to HEAD and take MIDDLE on create and update', async () => {
    const id = await scriptedConfiguration(t, 'truncation-default', { replies: [{ content: 'hi' }] });
    expect((await t.gql(TRUNCATION_OF, { id })).data?.configuration).toEqual({ truncation: 'HEAD', quarantineToolOutput: false });

    const modelId = (await t.gql(MODEL_OF, { id })).data!.configuration!.model.id;
    const created = await t.gql(CREATE_CONFIGURATION, { input: { name: 'truncation-created', modelId, truncation: 'MIDDLE' } });
    const createdId = member(created.data?.createConfiguration, 'Configuration').id;
    expect((await t.gql(TRUNCATION_OF, { id: createdId })).data?.configuration?.truncation).toBe('MIDDLE');

    const updated = await t.gql(SET_TRUNCATION, { id: createdId, input: { truncation: 'HEAD' } });
    expect(member(updated.data?.updateConfiguration, 'Configuration').truncation).toBe('HEAD');
    // A mode the schema does not know is refused before anything runs.
    const unknown = await t.gql(SET_TRUNCATION, { id: createdId, input: { truncation: 'TAIL' as 'HEAD' } });
    expect(unknown.errors?.[0]?.message).toMatch(/TruncationMode/);
  });

  it('should hand the model the head and the tail of a 60 000-byte result around the middle marker, as stored (MIDDLE)', async () => {
    const id = await configured('truncation-middle', { truncation: 'MIDDLE' });
    const { live, stored, sent } = await runOnce(id);
    const expected = middleOut(endsContent(RESULT_BYTES), MAX_CONTENT_BYTES - Buffer.byteLength(MIDDLE_TRUNCATION_MARKER));
    expect(stored).toBe(expected);
    expect(stored!.startsWith('FIRST LINE\nhhh')).toBe(true);
    expect(stored!.endsWith('ttt\nLAST LINE')).toBe(true);
    expect(Buffer.byteLength(stored!)).toBe(MAX_CONTENT_BYTES);
    expect(live).toBe(expected);
    expect(sent).toEqual([expected]);
  });

  it('should keep the quarantine envelope whole around a MIDDLE cut', async () => {
    const id = await configured('truncation-middle-quarantined', { truncation: 'MIDDLE', quarantineToolOutput: true });
    const { stored, sent } = await runOnce(id);
    const room = MAX_CONTENT_BYTES - quarantineOverheadBytes - Buffer.byteLength(MIDDLE_TRUNCATION_MARKER);
    const expected = `${QUARANTINE_OPEN}\n${middleOut(endsContent(RESULT_BYTES), room)}\n${QUARANTINE_CLOSE}`;
    expect(stored).toBe(expected);
    expect(sent).toEqual([expected]);
    expect(Buffer.byteLength(stored!)).toBe(MAX_CONTENT_BYTES);
  });

  it('should still cut HEAD-first, with the unchanged marker, for a configuration that does not choose', async () => {
    const id = await configured('truncation-head', {});
    const { stored, sent } = await runOnce(id);
    const content = endsContent(RESULT_BYTES);
    const expected = content.slice(0, MAX_CONTENT_BYTES - Buffer.byteLength(TRUNCATION_MARKER)) + TRUNCATION_MARKER;
    expect(stored).toBe(expected);
    expect(sent).toEqual([expected]);
  });
});

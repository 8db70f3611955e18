import { fileURLToPath } from 'node:url';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import type { PrivacyLevel } from '../gql/graphql.ts';
import { decodeIdFor } from '../../src/global-id.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fixtures/otlp-receiver.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member } from '../helpers/documents.ts';
import { collect, CREATE_CONFIGURATION, CREATE_MODEL, CREATE_PROVIDER, lastEvent, RUN_AGENT, scriptedConfiguration, wsClient } from '../helpers/runs.ts';

const ECHO = fileURLToPath(new URL('../fixtures/tool-modules/echo.ts', import.meta.url));
/** A secret shape the redactor knows, planted in the prompt, the model's answers and a tool's arguments and result. */
const SECRET = 'sk-proj-SPANCANARY7f3a9c1e5b2d8f4a6c0e9b3d7f1a5c';
/** The provider's API key: on no span at any level. */
const API_KEY = 'sk-APIKEYCANARY0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6';

/** A header the collector wants: sent with every export, never logged. */
const COLLECTOR_TOKEN = 'collector-canary-4c1d9e7a';

const APPROVE = graphql(`
  mutation TracingApprove($id: ID!, $digest: String!) {
    approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Run { id status } ... on Error { message } }
  }
`);
const RUN_STATUS = graphql(`
  query TracingRunStatus($id: ID!) { run(id: $id) { status terminationReason } }
`);

describe.each(TEST_DATABASES)('OpenTelemetry traces of runs on %s', (kind) => {
  let receiver: OtlpReceiver;
  let t: TestApp;
  let url: string;
  let configurations = 0;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    t = await startTestApp(kind, {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${COLLECTOR_TOKEN}`, AIRLOCK_TOOL_MODULES: ECHO },
    });
    url = (await t.app.server.start()).url;
  });
  afterAll(async () => {
    await t.stop();
    await receiver.close();
  });

  /** A SCRIPTED provider with an API key, a model and a configuration offering the echo tools. */
  async function configuration(replies: unknown[], privacyLevel: PrivacyLevel): Promise<string> {
    const name = `traced-${configurations++}`;
    const provider = await t.gql(CREATE_PROVIDER, { input: { name: `p-${name}`, kind: 'SCRIPTED', apiKey: API_KEY, settings: { replies } } });
    const model = await t.gql(CREATE_MODEL, {
      input: { providerId: member(provider.data?.createProvider, 'Provider').id, name: `m-${name}`, providerModelId: 'scripted-model', inputPricePerMTok: 1, outputPricePerMTok: 2 },
    });
    const created = await t.gql(CREATE_CONFIGURATION, {
      input: { name, modelId: member(model.data?.createModel, 'Model').id, privacyLevel, allowedToolGroups: ['echo'] },
    });
    return member(created.data?.createConfiguration, 'Configuration').id;
  }

  async function run(configurationId: string, prompt: string) {
    const client = wsClient(url, t.adminToken);
    try {
      return await collect(client, RUN_AGENT, { input: { configurationId, prompt } });
    } finally {
      await client.dispose();
    }
  }

  async function settled(runId: string) {
    for (;;) {
      const status = (await t.gql(RUN_STATUS, { id: runId })).data!.run!;
      if (status.status !== 'RUNNING' && status.status !== 'WAITING_FOR_APPROVAL') return status;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Every span of the traces a run's spans belong to (its start and resumes), after a flush. */
  async function spansOfRun(runId: string): Promise<ReceivedSpan[]> {
    await t.app.tracing!.forceFlush();
    const traces = new Set(receiver.spans.filter((span) => span.attributes['airlock.run.id'] === runId).map((span) => span.traceId));
    return receiver.spans.filter((span) => traces.has(span.traceId));
  }

  it('should export the run, its provider calls, tool calls, step writes and approval wait, and link the resumed pass to the start', async () => {
    const id = await configuration(
      [
        { content: '', toolCalls: [{ name: 'echo_text', arguments: { text: 'one' } }] },
        { content: '', toolCalls: [{ name: 'echo_write', arguments: { text: 'two' } }] },
        { content: 'Done.' },
      ],
      'METADATA',
    );
    const suspended = lastEvent(await run(id, 'Write something'), 'RunSuspendedEvent');
    const approved = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest });
    expect(approved.data!.approveRun.__typename).toBe('Run');
    expect(await settled(suspended.run.id)).toEqual({ status: 'COMPLETED', terminationReason: 'COMPLETED' });
    const runId = decodeIdFor('Run', suspended.run.id);
    const spans = await spansOfRun(runId);

    const start = spans.find((span) => span.name === 'airlock.run' && span.attributes['airlock.run.id'] === runId)!;
    expect(start.attributes).toMatchObject({ 'airlock.run.status': 'WAITING_FOR_APPROVAL', 'airlock.run.iterations': 2, 'airlock.user.id': expect.any(String) });
    expect(start.attributes['airlock.configuration.id']).toBe(decodeIdFor('Configuration', id));
    expect(start.events.map((event) => event.name)).toContain('airlock.approval.waiting');
    expect(start.events.find((event) => event.name === 'airlock.approval.waiting')!.attributes['airlock.approval.digest']).toBe(suspended.turnDigest);
    expect(start.events.filter((event) => event.name === 'airlock.step').map((event) => event.attributes['airlock.step.kind'])).toEqual(['REQUEST', 'LLM', 'TOOL', 'REQUEST', 'LLM']);

    const childrenOf = (parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId);
    const calls = childrenOf(start).filter((span) => span.name === 'chat scripted-model');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
    });
    const tool = childrenOf(start).find((span) => span.name === 'execute_tool echo_text')!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo_text',
      'airlock.tool.group': 'echo',
      'airlock.tool.decision': 'ok',
      'airlock.tool.is_error': false,
      'airlock.tool.duration_ms': expect.any(Number),
    });
    expect(spans.some((span) => span.name === 'airlock.run_writer.commit' && Number(span.attributes['airlock.batch.rows']) >= 1)).toBe(true);
    // The subscription that started the run is its parent: the trace begins at the GraphQL operation.
    const operation = spans.find((span) => span.spanId === start.parentSpanId)!;
    expect(operation.name).toBe('graphql.subscription RunAgent');

    const resumed = spans.find((span) => span.name === 'airlock.run.resume' && span.attributes['airlock.run.id'] === runId)!;
    expect(resumed.links).toEqual([{ traceId: start.traceId, spanId: start.spanId, attributes: { 'airlock.link': 'run.started' } }]);
    expect(resumed.events.find((event) => event.name === 'airlock.approval.decided')!.attributes).toEqual({
      'airlock.approval.approved': true,
      'airlock.approval.digest': suspended.turnDigest,
    });
    expect(resumed.attributes).toMatchObject({ 'airlock.run.status': 'COMPLETED', 'airlock.run.termination_reason': 'COMPLETED', 'airlock.run.iterations': 3 });
    const work = childrenOf(resumed).filter((span) => span.name !== 'airlock.run_writer.commit');
    expect(work.map((span) => span.name).sort()).toEqual(['chat scripted-model', 'execute_tool echo_write']);
    const stored = await t.app.services.db.selectFrom('runs').select('trace_parent').where('id', '=', runId).executeTakeFirstOrThrow();
    expect(stored.trace_parent).toBe(`00-${start.traceId}-${start.spanId}-01`);
  });

  it('should keep prompts, completions, tool arguments and results off spans below FULL, mask them at FULL, and never export the API key', async () => {
    const replies = [{ content: `Looking up ${SECRET}`, toolCalls: [{ name: 'echo_text', arguments: { text: SECRET } }] }, { content: `The key is ${SECRET}` }];
    const exported: Record<string, ReceivedSpan[]> = {};
    for (const level of ['NONE', 'METADATA', 'REDACTED', 'FULL'] as const) {
      const finished = lastEvent(await run(await configuration(replies, level), `Please use ${SECRET}`), 'RunFinishedEvent');
      expect(finished.run.status).toBe('COMPLETED');
      exported[level] = await spansOfRun(decodeIdFor('Run', finished.run.id));
      expect(exported[level].length).toBeGreaterThan(4);
    }
    const everything = receiver.bodies.join('\n');
    expect(everything).not.toContain('SPANCANARY');
    expect(everything).not.toContain('APIKEYCANARY');
    expect(receiver.lastHeaders['x-collector-token']).toBe(COLLECTOR_TOKEN);
    expect(t.logs.text()).not.toContain(COLLECTOR_TOKEN);
    const CONTENT_ATTRIBUTES = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.tool.call.id'];
    for (const level of ['NONE', 'METADATA', 'REDACTED'] as const) {
      const keys = exported[level]!.flatMap((span) => Object.keys(span.attributes));
      expect(keys.filter((key) => CONTENT_ATTRIBUTES.includes(key))).toEqual([]);
    }
    const full = exported.FULL!;
    const tool = full.find((span) => span.name === 'execute_tool echo_text')!;
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{"text":"***"}');
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('echo: ***');
    const calls = full.filter((span) => span.name === 'chat scripted-model');
    expect(String(calls[0]!.attributes['gen_ai.input.messages'])).toContain('Please use ***');
    expect(String(calls[1]!.attributes['gen_ai.output.messages'])).toContain('The key is ***');
  });
});

describe.each(TEST_DATABASES)('without OTEL_* variables on %s', (kind) => {
  it('should install no SDK: spans are no-ops and a run stores no traceparent', async () => {
    const t = await startTestApp(kind);
    try {
      expect(trace.isSpanContextValid(trace.getTracer('probe').startSpan('probe').spanContext())).toBe(false);
      expect(t.app.tracing).toBeNull();
      const { url } = await t.app.server.start();
      const configurationId = await scriptedConfiguration(t, 'untraced', { replies: [{ content: 'Hello.' }] });
      const client = wsClient(url, t.adminToken);
      const finished = lastEvent(await collect(client, RUN_AGENT, { input: { configurationId, prompt: 'hi' } }).finally(() => client.dispose()), 'RunFinishedEvent');
      const stored = await t.app.services.db.selectFrom('runs').select('trace_parent').where('id', '=', decodeIdFor('Run', finished.run.id)).executeTakeFirstOrThrow();
      expect(stored.trace_parent).toBeNull();
    } finally {
      await t.stop();
    }
  });
});

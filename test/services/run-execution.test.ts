import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import type { RunStep } from '../../src/runtime/run.ts';
import { executeRun } from '../../src/services/run-execution.ts';
import { setBudget } from '../../src/services/budgets.ts';
import { createConfiguration } from '../../src/services/configurations.ts';
import { createModel } from '../../src/services/models.ts';
import { createProvider } from '../../src/services/providers.ts';
import { createUser, toActor } from '../../src/services/users.ts';
import { MAX_CONTENT_BYTES, TRUNCATION_MARKER } from '../../src/tools/bounds.ts';
import type { Actor } from '../../src/tools/tool.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { anthropicWire } from '../fixtures/wires/anthropic.ts';
import type { FakeServer, NeutralReply } from '../fixtures/wires/fake-server.ts';
import { geminiWire } from '../fixtures/wires/gemini.ts';
import { ollamaWire } from '../fixtures/wires/ollama.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import { ARTIFACT_CANARY, THROWN_CANARY } from '../fixtures/tool-modules/probes.ts';
import type { WireFixture } from '../providers/kit.ts';

const WIRES: readonly WireFixture[] = [openaiWire, anthropicWire, ollamaWire, geminiWire];
const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
const ADMIN_ONLY = ['get_env', 'get_runtime_info', 'fetch_logs', 'list_users'];

describe.each(TEST_DATABASES)('agent runs end to end on %s', (kind) => {
  let t: TestApp;
  let admin: Actor;
  let user: Actor;
  const servers = new Map<string, FakeServer>();
  const configurations = new Map<string, { capped: string; regular: string }>();
  let users = 0;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: PROBES } });
    const { services } = t.app;
    await seedRecords(services.db);
    const adminRow = await services.db.selectFrom('users').selectAll().where('is_admin', '=', true).executeTakeFirstOrThrow();
    admin = toActor(adminRow);
    user = toActor((await createUser(services.db, { name: 'runner' })).user);
    for (const wire of WIRES) {
      const server = await wire.start();
      servers.set(wire.name, server);
      const provider = await createProvider(
        { db: services.db, secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) },
        { name: `p-${wire.name}`, kind: wire.kind, baseUrl: wire.baseUrl(server), apiKey: `key-${wire.name}-0123456789` },
      );
      const model = await createModel(services.db, { providerId: provider.id, name: `m-${wire.name}`, providerModelId: `vendor-${wire.name}`, inputPricePerMTok: 1, outputPricePerMTok: 2 });
      const regular = await createConfiguration(services.db, { name: `c-${wire.name}`, modelId: model.id, systemPrompt: 'Use the tools.' });
      const capped = await createConfiguration(services.db, { name: `capped-${wire.name}`, modelId: model.id, maxIterations: 3 });
      configurations.set(wire.name, { regular: regular.id, capped: capped.id });
    }
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
    await t.stop();
  });

  describe.each(WIRES)('over the $name wire', (wire) => {
    let server: FakeServer;
    beforeEach(() => {
      server = servers.get(wire.name)!;
      server.reset();
    });

    const enqueue = (...replies: NeutralReply[]) => server.enqueue(...replies.map((reply) => ({ reply })));
    const run = async (actor: Actor, configuration: 'regular' | 'capped' = 'regular') => {
      const steps: RunStep[] = [];
      const result = await executeRun(t.app.services, {
        configurationId: configurations.get(wire.name)![configuration],
        prompt: 'What do we have?',
        actor,
        signal: new AbortController().signal,
        onStep: (step) => void steps.push(step),
      });
      return { ...result, steps, sent: server.requests.map((request) => wire.read(request)) };
    };
    const toolSteps = (steps: RunStep[]) => steps.filter((step): step is Extract<RunStep, { kind: 'TOOL' }> => step.kind === 'TOOL');

    it('should run a tool round then answer, with usage recorded per call at the model price', async () => {
      enqueue(
        { toolCalls: [{ id: 'call_r', name: 'read_records', arguments: { table: 'customers', limit: 2 } }], usage: { promptTokens: 1000, completionTokens: 100 } },
        { content: 'Two customers.', usage: { promptTokens: 2000, completionTokens: 50 } },
      );
      const { runId, outcome, steps, sent } = await run(admin);
      expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', iterations: 2, finalContent: 'Two customers.' });
      expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM', 'TOOL', 'REQUEST', 'LLM']);
      expect(toolSteps(steps)[0]!.toolResult).toContain('customers');
      expect(sent[1]!.toolResults[0]!.content).toBe(toolSteps(steps)[0]!.toolResult);
      const records = await t.app.services.db.selectFrom('usage_records').selectAll().where('run_id', '=', runId).execute();
      expect(records.map((record) => [record.prompt_tokens, record.completion_tokens]).sort()).toEqual([[1000, 100], [2000, 50]]);
      expect(records.reduce((sum, record) => sum + record.cost, 0)).toBeCloseTo((3000 * 1 + 150 * 2) / 1e6, 12);
      expect(outcome.usage).toMatchObject({ promptTokens: 3000, completionTokens: 150 });
    });

    it('should keep artifacts in the steps and out of every request the provider received', async () => {
      enqueue({ toolCalls: [{ id: 'call_p', name: 'probe_artifacts', arguments: {} }] }, { content: 'ok' });
      const { steps } = await run(admin);
      expect(toolSteps(steps)[0]!.artifacts).toEqual([{ type: 'text', label: 'for humans only', data: { text: ARTIFACT_CANARY } }]);
      expect(server.requests).toHaveLength(2);
      for (const request of server.requests) expect(request.raw).not.toContain(ARTIFACT_CANARY);
    });

    it('should refuse a registered tool that was not offered and not execute it', async () => {
      enqueue({ toolCalls: [{ id: 'call_g', name: 'get_env_raw', arguments: {} }] }, { content: 'ok' });
      const { steps, sent } = await run(admin);
      expect(sent[0]!.toolNames).not.toContain('get_env_raw');
      expect(toolSteps(steps)[0]).toMatchObject({ toolResult: 'Error: tool "get_env_raw" not permitted', toolIsError: true, artifacts: [] });
      expect(sent[1]!.toolResults[0]!.content).toBe('Error: tool "get_env_raw" not permitted');
    });

    it('should answer a throwing tool with the generic failure and keep the exception in the log only', async () => {
      enqueue({ toolCalls: [{ id: 'call_t', name: 'probe_throw', arguments: {} }] }, { content: 'ok' });
      const { steps } = await run(admin);
      expect(toolSteps(steps)[0]!.toolResult).toBe('Error: tool "probe_throw" failed.');
      expect(JSON.stringify(steps)).not.toContain('THROWN-CANARY');
      for (const request of server.requests) expect(request.raw).not.toContain('THROWN-CANARY');
      // The exception stays in the server log, with its credential masked by the logger (src/redaction/).
      expect(t.logs.text()).toContain(`could not connect to ${THROWN_CANARY.replace(new URL(THROWN_CANARY).password, '***')}`);
      expect(t.logs.text()).not.toContain('THROWN-CANARY');
    });

    it('should hand the model a 60 000-byte result capped at 50 000 bytes with the marker', async () => {
      enqueue({ toolCalls: [{ id: 'call_l', name: 'probe_large', arguments: { bytes: 60_000 } }] }, { content: 'ok' });
      const { sent } = await run(admin);
      const content = sent[1]!.toolResults[0]!.content;
      expect(Buffer.byteLength(content)).toBe(MAX_CONTENT_BYTES);
      expect(content.endsWith(TRUNCATION_MARKER)).toBe(true);
    });

    it('should never offer an admin-only tool to a non-admin', async () => {
      enqueue({ content: 'ok' });
      const asUser = await run(user);
      expect(asUser.sent[0]!.toolNames).toContain('read_records');
      for (const name of ADMIN_ONLY) expect(asUser.sent[0]!.toolNames).not.toContain(name);
      server.reset();
      enqueue({ content: 'ok' });
      const asAdmin = await run(admin);
      expect(asAdmin.sent[0]!.toolNames).toEqual(expect.arrayContaining(ADMIN_ONLY));
    });

    it('should end a run denied mid-loop by the budget truncated with the partial trace', async () => {
      const limited = toActor((await createUser(t.app.services.db, { name: `limited-${wire.name}-${users++}` })).user);
      await setBudget(t.app.services.db, { scope: 'USER', id: limited.id }, { period: 'DAILY', maxRequests: 1 });
      enqueue({ toolCalls: [{ id: 'call_b', name: 'describe_tables', arguments: {} }] }, { content: 'never sent' });
      const { outcome, steps } = await run(limited);
      expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'BUDGET_EXHAUSTED', truncated: true, iterations: 1 });
      expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM', 'TOOL']);
      expect(server.requests).toHaveLength(1);
      server.reset();
      const again = await run(limited);
      expect(again.outcome).toMatchObject({ status: 'FAILED', terminationReason: 'BUDGET_EXHAUSTED', iterations: 0 });
      expect(server.requests).toHaveLength(0);
    });

    it('should synthesise at the cap with a request that carries no tools field', async () => {
      const again = { toolCalls: [{ id: 'call_c', name: 'describe_tables', arguments: {} }] };
      enqueue(again, again, again, { content: 'Here is what I found.' });
      const { outcome, sent } = await run(admin, 'capped');
      expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'MAX_ITERATIONS', truncated: true, iterations: 3, finalContent: 'Here is what I found.' });
      expect(sent).toHaveLength(4);
      expect(sent[3]!.toolNames).toBeUndefined();
      expect(sent[3]!.toolResults).toHaveLength(3);
    });
  });
});

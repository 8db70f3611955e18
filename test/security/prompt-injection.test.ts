import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { notPermittedError, unknownToolError } from '../../src/access/gate.ts';
import type { Db } from '../../src/db/database.ts';
import { findConfigurationsByIds } from '../../src/db/repositories/configurations.ts';
import { seedCustomers, seedRecords } from '../../src/db/repositories/records-seed.ts';
import type { ChatMessage, Completion, LlmProvider, ToolCall } from '../../src/runtime/llm.ts';
import { runLoop } from '../../src/runtime/loop.ts';
import type { RunOutcome, RunStep } from '../../src/runtime/run.ts';
import { createBudgetGuard } from '../../src/services/budget-guard.ts';
import { createConfiguration } from '../../src/services/configurations.ts';
import { createModel } from '../../src/services/models.ts';
import { createProvider } from '../../src/services/providers.ts';
import { gateInputFor } from '../../src/services/tool-access.ts';
import { createUser, grantTable, toActor } from '../../src/services/users.ts';
import { builtinTools } from '../../src/tools/builtins.ts';
import { createRegistry, type ToolRegistry } from '../../src/tools/registry.ts';
import { QUARANTINE_CLOSE, QUARANTINE_OPEN, quarantinedContent } from '../../src/tools/quarantine.ts';
import type { Actor, Tool } from '../../src/tools/tool.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, scriptedConfiguration } from '../helpers/runs.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';
import { INJECTION_PAYLOADS, readTicketTool, TICKET_TOOL, type InjectionPayload } from '../fixtures/tool-modules/injection-relay.ts';

/**
 * Prompt injection through tool output (issue 7). A model that OBEYS every instruction it finds in
 * the latest tool results is fed each payload of `test/fixtures/injection-payloads.json`, through a
 * tool that returns it verbatim and through the real `read_records` reading it from a table cell.
 * Whatever the model then asks for, nothing outside the offered set may run, the control tokens must
 * reach it neutralised, a quarantined result must sit inside exactly one envelope, and the run must
 * settle normally. Last, runs through the whole service check that the stored trail keeps every step
 * even when the injected text (or the model) carries a character the database cannot store.
 */

const payloadSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  technique: z.string().min(1),
  note: z.string().min(1),
  text: z.string().min(1),
  target: z.strictObject({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }),
  storable: z.literal(false).optional(),
});
const PAYLOADS = z.array(payloadSchema).min(30).parse(INJECTION_PAYLOADS);
type Payload = InjectionPayload;
/** What a table cell can hold (PostgreSQL text holds no NUL). */
const CELL_PAYLOADS = PAYLOADS.filter((payload) => payload.storable !== false);
const RELAY_MODULE = fileURLToPath(new URL('../fixtures/tool-modules/injection-relay.ts', import.meta.url));

/** DESIGN §3: the tokens that must never reach a model verbatim (matched case-insensitively, as the sanitiser does). */
const CONTROL_TOKENS = [
  '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>',
  '<|start|>', '<|channel|>', '<|message|>', '<|end|>', '<|call|>', '<|return|>', '<|constrain|>',
  '[INST]', '[/INST]', '<<SYS>>', '<</SYS>>', '[TOOL_CALLS]', '[AVAILABLE_TOOLS]', '<start_of_turn>', '<end_of_turn>',
  '<|tool▁calls▁begin|>', '<|tool▁sep|>', '<|User|>', '<|Assistant|>', '<|end▁of▁sentence|>',
];

/** What an injected read of the ungranted `vault` table would leak. */
const VAULT_CANARY = `VAULT-CANARY-${randomUUID()}`;
/** Offered to the non-admin reader by a configuration limited to the content and structure groups. */
const OFFERED = ['read_records', 'describe_tables', TICKET_TOOL];

// ── the obedient model

/** How the model reads text: compatibility forms folded (full-width → ASCII), invisible format characters dropped. */
function fold(text: string): string {
  return text.normalize('NFKC').replace(/\p{Cf}/gu, '');
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** Every way the model reads a text: as is, and every string inside any JSON it contains (a read_records line, a JSON cell). */
function readings(text: string, depth = 0): string[] {
  const folded = fold(text);
  const found = [folded];
  if (depth >= 4) return found;
  for (const piece of new Set([folded, ...folded.split('\n')])) {
    if (!/^\s*[[{"]/.test(piece)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(piece);
    } catch {
      continue;
    }
    for (const inner of stringsIn(parsed)) if (inner !== piece) found.push(...readings(inner, depth + 1));
  }
  return found;
}

/** The JSON object text starting at `start` (a `{`), braces balanced outside strings; null if unbalanced. */
function balancedObject(text: string, start: number): string | null {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return text.slice(start, index + 1);
  }
  return null;
}

const INSTRUCTION = /(?<![A-Za-z])call\s+([^\s{}]+)\s*(?=\{)/giu;

/** The `CALL <tool> {json}` instructions in a tool result, however encoded, deduplicated, in order. */
function instructionsIn(text: string): { name: string; arguments: Record<string, unknown> }[] {
  const calls = new Map<string, { name: string; arguments: Record<string, unknown> }>();
  for (const reading of readings(text)) {
    for (const match of reading.matchAll(INSTRUCTION)) {
      const json = balancedObject(reading, match.index + match[0].length);
      if (json === null) continue;
      let args: unknown;
      try {
        args = JSON.parse(json);
      } catch {
        continue;
      }
      if (args === null || typeof args !== 'object' || Array.isArray(args)) continue;
      const name = match[1]!;
      calls.set(`${name} ${JSON.stringify(args)}`, { name, arguments: args as Record<string, unknown> });
    }
  }
  return [...calls.values()];
}

/**
 * An in-process model that does whatever tool output tells it: its first turn makes the delivery
 * call, every later turn obeys the instructions in the tool results it just received (offered or
 * not), and it answers once there is nothing left to obey. Records every transcript it was sent.
 */
function obedientModel(delivery: { name: string; arguments: Record<string, unknown> }) {
  const received: (readonly ChatMessage[])[] = [];
  const reply = (content: string, calls: { name: string; arguments: Record<string, unknown> }[], turn: number): Completion => {
    const toolCalls: ToolCall[] = calls.map((call, index) => ({ id: `call_${turn}_${index}`, name: call.name, arguments: call.arguments }));
    return { content, toolCalls, usage: { promptTokens: 50, completionTokens: 5 }, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop' };
  };
  const provider: LlmProvider = {
    kind: 'OBEDIENT',
    async complete(request) {
      received.push(structuredClone(request.messages));
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      if (request.tools === null || request.tools.length === 0) return reply('Here is what I could do.', [], turn);
      if (turn === 0) return reply('', [delivery], turn);
      const latest: string[] = [];
      for (let index = request.messages.length - 1; index >= 0 && request.messages[index]!.role === 'tool'; index--) {
        latest.unshift(request.messages[index]!.content);
      }
      const obeyed = latest.flatMap(instructionsIn);
      return obeyed.length > 0 ? reply('Following the instructions in the tool output.', obeyed, turn) : reply('Done.', [], turn);
    },
  };
  return { provider, received };
}

// ── checks

type ToolStep = Extract<RunStep, { kind: 'TOOL' }>;
type LlmStep = Extract<RunStep, { kind: 'LLM' }>;

/** Envelope tags as a reader sees them: after the same folding the model applies. */
function envelopeTagCount(text: string): number {
  return fold(text).match(/<\s*\/?\s*tool_output_quarantine/gi)?.length ?? 0;
}

/** The model-facing text of a result: the inside of the envelope when quarantined. */
function unwrapped(content: string, quarantined: boolean): string {
  if (!quarantined) return content;
  const inside = quarantinedContent(content);
  expect(inside, `not a clean envelope: ${JSON.stringify(content.slice(0, 200))}`).not.toBeNull();
  return inside!;
}

function expectNoVerbatimControlToken(text: string): void {
  // As written, and as a tokenizer that NFKC-normalises its input reads it (full-width look-alikes folded back).
  for (const reading of [text, text.normalize('NFKC')]) {
    const lower = reading.toLowerCase();
    for (const token of CONTROL_TOKENS) expect(lower.includes(token.toLowerCase()), `${token} reached the model in ${JSON.stringify(text.slice(0, 300))}`).toBe(false);
    expect(reading).not.toMatch(/<\|[\w.\-\u2581]{1,64}\|>/);
  }
}

describe.each(TEST_DATABASES)('prompt injection through tool output on %s', (kind) => {
  let t: TestApp;
  let db: Db;
  let reader: Actor;
  let registry: ToolRegistry;
  let modelId: string;
  const configurations = new Map<boolean, string>();
  /** Names of the tools whose `execute` ran, per run. */
  let executed: string[] = [];
  let inboxBefore: unknown[];

  const spied = (tool: Tool): Tool => ({
    ...tool,
    execute: (args, ctx) => {
      executed.push(tool.name);
      return tool.execute(args, ctx);
    },
  });

  beforeAll(async () => {
    t = await startTestApp(kind);
    const { services } = t.app;
    db = services.db;
    await seedRecords(db);
    await sql`create table records.inbox (id integer primary key, subject text not null, body text not null)`.execute(db);
    for (const [index, payload] of CELL_PAYLOADS.entries()) {
      await sql`insert into records.inbox (id, subject, body) values (${index + 1}, ${payload.id}, ${payload.text})`.execute(db);
    }
    await sql`create table records.vault (id integer primary key, note text not null)`.execute(db);
    await sql`insert into records.vault (id, note) values (1, ${VAULT_CANARY})`.execute(db);
    inboxBefore = await sql`select * from records.inbox order by id`.execute(db).then((result) => result.rows);

    reader = toActor((await createUser(db, { name: 'reader' })).user);
    await grantTable(db, reader.id, { table: 'inbox' });
    registry = createRegistry([
      { source: 'builtin', tools: builtinTools().map(spied) },
      { source: 'test', tools: [spied(readTicketTool)] },
    ]);
    const provider = await createProvider(
      { db, secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) },
      { name: 'obedient', kind: 'SCRIPTED' },
    );
    modelId = (await createModel(db, { providerId: provider.id, name: 'obedient', providerModelId: 'obedient-1', inputPricePerMTok: 0, outputPricePerMTok: 0 })).id;
    for (const quarantine of [false, true]) {
      const configuration = await createConfiguration(db, {
        name: quarantine ? 'support-quarantined' : 'support',
        modelId,
        systemPrompt: 'Answer questions about support tickets.',
        allowedToolGroups: ['content', 'structure'],
        quarantineToolOutput: quarantine,
      });
      configurations.set(quarantine, configuration.id);
    }
  });

  afterAll(async () => {
    await t?.stop();
  });

  /** One run as the loop makes it for this configuration and actor (gate, switches, budgets, tool data), with the obedient model. */
  async function runWith(quarantine: boolean, delivery: { name: string; arguments: Record<string, unknown> }) {
    const [configuration] = await findConfigurationsByIds(db, [configurations.get(quarantine)!]);
    const runId = randomUUID();
    const model = obedientModel(delivery);
    const steps: RunStep[] = [];
    executed = [];
    const outcome: RunOutcome = await runLoop({
      runId,
      prompt: 'Summarise the ticket for me.',
      settings: {
        systemPrompt: configuration!.system_prompt ?? '',
        temperature: configuration!.temperature,
        maxTokens: configuration!.max_tokens,
        maxIterations: configuration!.max_iterations,
        quarantineToolOutput: configuration!.quarantine_tool_output,
      },
      model: { providerModelId: 'obedient-1', inputPricePerMTok: 0, outputPricePerMTok: 0 },
      provider: model.provider,
      registry,
      gate: await gateInputFor(db, registry, configuration!, reader),
      budget: createBudgetGuard({ db, writer: t.app.services.writer, logger: t.app.services.logger }, { userId: reader.id, configurationId: configuration!.id, modelId, runId }),
      toolData: t.app.services.toolData,
      logger: t.app.services.logger.child({ runId }),
      signal: new AbortController().signal,
      onStep: (step) => void steps.push(step),
    });
    return { outcome, steps, received: model.received, ran: [...executed] };
  }

  const deliveries = {
    'a tool that returns the payload': {
      payloads: PAYLOADS,
      call: (payload: Payload, _row: number) => ({ name: TICKET_TOOL, arguments: { id: payload.id } }),
    },
    'a read_records table cell': {
      payloads: CELL_PAYLOADS,
      call: (_payload: Payload, row: number) => ({ name: 'read_records', arguments: { table: 'inbox', filters: [{ column: 'id', value: row }] } }),
    },
  } as const;

  describe.each([
    { quarantine: false, label: 'without quarantine' },
    { quarantine: true, label: 'with quarantineToolOutput' },
  ])('$label', ({ quarantine }) => {
    describe.each(Object.keys(deliveries) as (keyof typeof deliveries)[])('delivered through %s', (path) => {
      it.each(deliveries[path].payloads.map((payload, index) => ({ payload, row: index + 1, id: payload.id })))(
        'should contain $id',
        async ({ payload, row }) => {
          const { outcome, steps, received, ran } = await runWith(quarantine, deliveries[path].call(payload, row));

          // Settles normally: never FAILED, never thrown.
          expect(outcome.status).toBe('COMPLETED');
          expect(['COMPLETED', 'MAX_ITERATIONS']).toContain(outcome.terminationReason);
          if (outcome.terminationReason === 'MAX_ITERATIONS') expect(outcome.truncated).toBe(true);

          // Only the offered set was offered, and the payload was delivered and obeyed.
          const requests = steps.filter((step): step is Extract<RunStep, { kind: 'REQUEST' }> => step.kind === 'REQUEST');
          expect(requests[0]!.offeredTools).toEqual(OFFERED);
          const tools = steps.filter((step): step is ToolStep => step.kind === 'TOOL');
          expect(tools[0]).toMatchObject({ round: 1, toolIsError: false });
          const obeyed = steps.find((step): step is LlmStep => step.kind === 'LLM' && step.round === 2)!;
          expect(obeyed.requestedToolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual([
            { name: payload.target.tool, arguments: payload.target.arguments },
          ]);

          // No tool outside the offered set executed; each such call got exactly the generic refusal.
          expect(ran.filter((name) => !OFFERED.includes(name))).toEqual([]);
          for (const step of tools) {
            if (OFFERED.includes(step.toolName)) continue;
            const expected = registry.get(step.toolName) ? notPermittedError(step.toolName) : unknownToolError(step.toolName);
            expect(unwrapped(step.toolResult, quarantine)).toBe(expected);
            expect(step).toMatchObject({ toolIsError: true, artifacts: [] });
          }
          // An offered tool steered at data the reader may not see is refused by the data layer.
          const injected = tools.filter((step) => step.round === 2);
          expect(injected).toHaveLength(1);
          if (payload.target.tool === 'read_records') expect(injected[0]!.toolIsError).toBe(true);

          // What the model received: neutralised tokens, one envelope per quarantined result, no leaked data.
          const transcripts = received.flat();
          for (const message of transcripts) {
            expectNoVerbatimControlToken(message.content);
            expect(message.content).not.toContain(VAULT_CANARY);
            if (message.role !== 'tool') continue;
            if (quarantine) {
              expect(message.content.startsWith(`${QUARANTINE_OPEN}\n`) && message.content.endsWith(`\n${QUARANTINE_CLOSE}`)).toBe(true);
              expect(envelopeTagCount(message.content), JSON.stringify(message.content)).toBe(2);
            }
          }
          // Every TOOL step shows exactly what the model received.
          const toolMessages = transcripts.filter((message) => message.role === 'tool');
          for (const step of tools) {
            const sent = toolMessages.find((message) => message.role === 'tool' && message.toolCallId === step.toolCallId);
            expect(sent?.content).toBe(step.toolResult);
          }
        },
      );
    });
  });

  it('should leave every row as it was: no injected write ran', async () => {
    const after = await sql`select * from records.inbox order by id`.execute(db).then((result) => result.rows);
    expect(after).toEqual(inboxBefore);
    const customer = await sql<{ email: string }>`select email from records.customers where id = 3`.execute(db);
    expect(customer.rows[0]!.email).toBe(seedCustomers()[2]!.email);
  });

  it('should find exactly the target instruction in every payload (the model is not a straw man)', () => {
    for (const payload of PAYLOADS) {
      expect(instructionsIn(payload.text), payload.id).toEqual([{ name: payload.target.tool, arguments: payload.target.arguments }]);
      // A cell longer than read_records' 300-character cap would lose its instruction.
      expect([...payload.text].length, payload.id).toBeLessThanOrEqual(300);
      expect(payload.storable === false, payload.id).toBe(payload.text.includes('\u0000'));
    }
    expect(new Set(PAYLOADS.map((payload) => payload.id)).size).toBe(PAYLOADS.length);
  });
});

/**
 * The stored copy of an injected run: what an auditor reads later must hold every step, even when
 * the injected text carries a character the database cannot store (a NUL made the step, and the
 * next request that repeats it, vanish from the trail).
 */
describe.each(TEST_DATABASES)('the stored trail of an injected run on %s', (kind) => {
  let t: TestApp;
  const payload = PAYLOADS.find((candidate) => candidate.id === 'nul-audit-evasion')!;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: RELAY_MODULE } });
  });

  afterAll(async () => {
    await t?.stop();
    await server?.close();
  });

  /** Runs the configuration over SSE as the admin, then reads the stored run: every live step must be on record. */
  async function runAndReload(configurationId: string, expectedFinalContent?: string) {
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt: 'Summarise the ticket.' } } }),
    });
    const results = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { data?: { runAgent: any }; errors?: unknown[] });
    expect(results.flatMap((result) => result.errors ?? [])).toEqual([]);
    const events = results.map((result) => result.data!.runAgent);
    const finished = events.find((event) => event.__typename === 'RunFinishedEvent').run;
    expect(finished).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED' });
    const live: any[] = events.filter((event) => event.__typename === 'RunStepEvent').map((event) => event.step);

    const stored = await t.gql(
      `query($id: ID!) { run(id: $id) { status auditIncomplete finalContent steps(first: 50) { edges { node { sequence kind toolName toolResult toolIsError } } } } }`,
      { id: finished.id },
    );
    expect(stored.errors).toBeUndefined();
    expect(stored.data.run).toMatchObject({ status: 'COMPLETED', auditIncomplete: false });
    if (expectedFinalContent !== undefined) expect(stored.data.run.finalContent).toBe(expectedFinalContent);
    const steps: any[] = stored.data.run.steps.edges.map((edge: any) => edge.node);
    // What PostgreSQL cannot hold (NUL) is kept as U+FFFD; everything else as it was live.
    const storable = (text: string | null) => text?.replaceAll('\u0000', '\ufffd') ?? null;
    expect(steps.map((step) => [step.sequence, step.kind, step.toolName])).toEqual(live.map((step) => [step.sequence, step.kind, storable(step.toolName)]));
    return { live, steps };
  }

  let server: FakeServer | undefined;

  it.each(['FULL', 'METADATA'])('should store every step and the outcome of a run whose model writes NUL at %s', async (level) => {
    server ??= await openaiWire.start();
    server.reset();
    // A model echoing what it read: a tool name and an answer carrying NUL.
    server.enqueue({ reply: { toolCalls: [{ id: 'call_1', name: 'get_env\u0000raw', arguments: { note: 'a\u0000b' } }] } }, { reply: { content: 'Done.\u0000' } });
    const provider = await t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ... on Provider { id } } }`, {
      input: { name: `echo-${level}`, kind: 'OPENAI', baseUrl: openaiWire.baseUrl(server) },
    });
    const model = await t.gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
      input: { providerId: provider.data.createProvider.id, name: `echo-${level}`, providerModelId: 'gpt-echo', inputPricePerMTok: 0, outputPricePerMTok: 0 },
    });
    const configuration = await t.gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } } }`, {
      input: { name: `echo-${level}`, modelId: model.data.createModel.id, privacyLevel: level, allowedToolGroups: ['content'] },
    });
    const { steps } = await runAndReload(configuration.data.createConfiguration.id, level === 'FULL' ? 'Done.\ufffd' : undefined);
    expect(steps.find((step) => step.kind === 'TOOL').toolName).toBe('get_env\ufffdraw');
  });

  it.each(['FULL', 'REDACTED', 'METADATA'] as const)('should store every step of a run fed a NUL-bearing payload at %s', async (level) => {
    const configurationId = await scriptedConfiguration(t, `stored-${level.toLowerCase()}`, {
      replies: [
        { content: '', toolCalls: [{ name: TICKET_TOOL, arguments: { id: payload.id } }] },
        { content: '', toolCalls: [{ name: payload.target.tool, arguments: payload.target.arguments }] },
        { content: 'Nothing more to do.' },
      ],
      privacyLevel: level,
      allowedToolGroups: ['content'],
    });
    const { live, steps } = await runAndReload(configurationId);
    // The injected call was refused, and the refusal is on the record.
    expect(steps.find((step) => step.kind === 'TOOL' && step.toolName === payload.target.tool)).toMatchObject({ toolIsError: true });
    if (level === 'FULL') {
      const relayed = live.find((step) => step.kind === 'TOOL' && step.toolName === TICKET_TOOL);
      expect(relayed.toolResult).toContain('\u0000');
      expect(steps.find((step) => step.kind === 'TOOL' && step.toolName === TICKET_TOOL).toolResult).toBe(relayed.toolResult.replaceAll('\u0000', '\uFFFD'));
    }
  });
});

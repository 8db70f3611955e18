import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { emptyToolState } from '../../src/access/availability.ts';
import type { GateInput } from '../../src/access/gate.ts';
import { ProviderError, type Completion, type CompletionRequest, type LlmProvider } from '../../src/runtime/llm.ts';
import type { BudgetDenial } from '../../src/runtime/budget.ts';
import { runLoop } from '../../src/runtime/loop.ts';
import type { LoopInput } from '../../src/runtime/loop-session.ts';
import type { RunStep } from '../../src/runtime/run.ts';
import { MAX_CONTENT_BYTES, TRUNCATION_MARKER } from '../../src/tools/bounds.ts';
import { createRegistry } from '../../src/tools/registry.ts';
import { tableArtifact, ToolResult } from '../../src/tools/result.ts';
import type { Actor, Tool } from '../../src/tools/tool.ts';

const USER: Actor = { id: 'u', name: 'user', isAdmin: false };

type Scripted = { content?: string; calls?: { name: string; arguments?: Record<string, unknown> }[] } | Error;

/** An in-process provider that answers from a script and records every request it received. */
function scriptedProvider(script: Scripted[]) {
  const requests: CompletionRequest[] = [];
  const provider: LlmProvider = {
    kind: 'TEST',
    async complete(request) {
      requests.push(structuredClone({ ...request, signal: undefined }) as unknown as CompletionRequest);
      request.signal.throwIfAborted();
      const next = script.shift() ?? { content: 'out of script' };
      if (next instanceof Error) throw next;
      const toolCalls = (next.calls ?? []).map((call, index) => ({ id: `c${requests.length}_${index}`, name: call.name, arguments: call.arguments ?? {} }));
      return {
        content: next.content ?? '',
        toolCalls,
        usage: { promptTokens: 100, completionTokens: 10 },
        finishReason: toolCalls.length ? 'tool_calls' : 'stop',
      } satisfies Completion;
    },
  };
  return { provider, requests };
}

function makeTool(name: string, execute: Tool['execute'], extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `${name} tool`,
    group: 'content',
    parameters: z.object({ table: z.string().optional() }),
    enabledByDefault: true,
    requiresAdmin: false,
    execute: vi.fn(execute),
    ...extra,
  };
}

const lookup = makeTool('lookup', async (args: { table?: string }) =>
  ToolResult.text(`rows of ${args.table ?? 'nothing'}`, tableArtifact('rows', ['secret_col'], [['ARTIFACT-ONLY-CELL']])),
);
const adminOnly = makeTool('get_env', async () => ToolResult.text('env'), { requiresAdmin: true, group: 'system' });
const hidden = makeTool('get_env_raw', async () => ToolResult.text('raw env'), { requiresAdmin: false, group: 'system' });

function loopInput(script: Scripted[], overrides: Partial<LoopInput> & { tools?: Tool[]; allow?: string[] | null; actor?: Actor | null } = {}) {
  const tools = overrides.tools ?? [lookup, adminOnly, hidden];
  const registry = createRegistry([{ source: 'test', tools }]);
  const { provider, requests } = scriptedProvider(script);
  const steps: RunStep[] = [];
  const recorded: number[] = [];
  const logs: { obj: object; msg?: string }[] = [];
  const log = (obj: object, msg?: string) => void logs.push({ obj, msg });
  const gate: GateInput = {
    registry,
    state: emptyToolState(),
    actor: overrides.actor === undefined ? USER : overrides.actor,
    allowList: overrides.allow === undefined ? new Set(['lookup', 'get_env']) : overrides.allow === null ? null : new Set(overrides.allow),
  };
  const input: LoopInput = {
    runId: 'run-1',
    prompt: 'How many customers?',
    settings: { systemPrompt: 'Be brief.', temperature: null, maxTokens: 100, maxIterations: 5, quarantineToolOutput: false },
    model: { providerModelId: 'm-1', inputPricePerMTok: 1, outputPricePerMTok: 2 },
    provider,
    registry,
    gate,
    budget: { preflight: async () => null, record: async (usage) => void recorded.push(usage.cost) },
    toolData: {},
    logger: { info: log, warn: log, error: log },
    signal: new AbortController().signal,
    onStep: (step) => void steps.push(step),
    ...overrides,
  };
  return { input, requests, steps, recorded, logs };
}

describe('runLoop', () => {
  it('should make ONE plain completion without tools when none is offered', async () => {
    const { input, requests, steps } = loopInput([{ content: 'Twenty.' }], { allow: [] });
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED', iterations: 1, truncated: false, finalContent: 'Twenty.' });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.tools).toBeNull();
    expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM']);
  });

  it('should count a direct answer as one iteration', async () => {
    const { input, requests } = loopInput([{ content: 'Done.' }]);
    expect((await runLoop(input)).iterations).toBe(1);
    expect(requests[0]!.tools?.map((tool) => tool.name)).toEqual(['lookup']);
  });

  it('should count three tool rounds then an answer as four iterations, steps in order', async () => {
    const script: Scripted[] = [{ calls: [{ name: 'lookup', arguments: { table: 'a' } }] }, { calls: [{ name: 'lookup' }] }, { calls: [{ name: 'lookup' }] }, { content: 'All done.' }];
    const { input, steps } = loopInput(script);
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'COMPLETED', iterations: 4, finalContent: 'All done.', truncated: false });
    expect(steps.map((step) => `${step.kind}:${step.round}`)).toEqual([
      'REQUEST:1', 'LLM:1', 'TOOL:1', 'REQUEST:2', 'LLM:2', 'TOOL:2', 'REQUEST:3', 'LLM:3', 'TOOL:3', 'REQUEST:4', 'LLM:4',
    ]);
  });

  it('should synthesise the answer WITHOUT tools at the cap, truncated, not counting the synthesis', async () => {
    const always = { calls: [{ name: 'lookup' }] };
    const { input, requests, recorded } = loopInput([always, always, { content: 'Summary from what I have.' }], {
      settings: { systemPrompt: '', temperature: null, maxTokens: null, maxIterations: 2, quarantineToolOutput: false },
    });
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'MAX_ITERATIONS', truncated: true, iterations: 2, finalContent: 'Summary from what I have.' });
    expect(requests).toHaveLength(3);
    expect(requests[2]!.tools).toBeNull();
    // The synthesis sees the pending calls' results: every tool_call is answered.
    expect(requests[2]!.messages.filter((message) => message.role === 'tool')).toHaveLength(2);
    expect(recorded).toHaveLength(3);
    expect(outcome.usage).toEqual({ promptTokens: 300, completionTokens: 30, cost: expect.closeTo(3 * (100 * 1 + 10 * 2) / 1e6, 12) });
  });

  it('should refuse a registered tool that was not offered and not execute it', async () => {
    const { input, steps } = loopInput([{ calls: [{ name: 'get_env_raw' }] }, { content: 'ok' }]);
    await runLoop(input);
    const tool = steps.find((step) => step.kind === 'TOOL');
    expect(tool).toMatchObject({ toolName: 'get_env_raw', toolResult: 'Error: tool "get_env_raw" not permitted', toolIsError: true });
    expect(hidden.execute).not.toHaveBeenCalled();
  });

  it('should never offer an admin-only tool to a non-admin, even when allowed', async () => {
    const { input, requests } = loopInput([{ content: 'ok' }], { allow: ['lookup', 'get_env'] });
    await runLoop(input);
    expect(requests[0]!.tools?.map((tool) => tool.name)).toEqual(['lookup']);
    const admin = loopInput([{ content: 'ok' }], { actor: { id: 'a', name: 'a', isAdmin: true } });
    await runLoop(admin.input);
    expect(admin.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['lookup', 'get_env']);
  });

  it('should keep artifacts on the steps and out of every provider request', async () => {
    const { input, requests, steps } = loopInput([{ calls: [{ name: 'lookup', arguments: { table: 't' } }] }, { content: 'Done.' }]);
    await runLoop(input);
    const tool = steps.find((step) => step.kind === 'TOOL');
    expect(tool && tool.kind === 'TOOL' ? tool.artifacts : []).toEqual([{ type: 'table', label: 'rows', data: { columns: ['secret_col'], rows: [['ARTIFACT-ONLY-CELL']] } }]);
    expect(JSON.stringify(requests)).not.toContain('ARTIFACT-ONLY-CELL');
    expect(JSON.stringify(requests)).toContain('rows of t');
  });

  it('should append results in call order even when later calls finish first', async () => {
    const slowFirst = makeTool('lookup', async (args: { table?: string }) => {
      await new Promise((resolve) => setTimeout(resolve, args.table === 'slow' ? 60 : 1));
      return ToolResult.text(`done ${args.table}`);
    });
    const { input, requests } = loopInput([{ calls: [{ name: 'lookup', arguments: { table: 'slow' } }, { name: 'lookup', arguments: { table: 'fast' } }] }, { content: 'ok' }], {
      tools: [slowFirst],
      allow: null,
    });
    await runLoop(input);
    const results = requests[1]!.messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results).toEqual(['done slow', 'done fast']);
  });

  it('should cap a 60 000-byte tool result before it reaches the model', async () => {
    const huge = makeTool('lookup', async () => ToolResult.text('x'.repeat(60_000)));
    const { input, requests } = loopInput([{ calls: [{ name: 'lookup' }] }, { content: 'ok' }], { tools: [huge], allow: null });
    await runLoop(input);
    const sent = requests[1]!.messages.find((message) => message.role === 'tool')!.content;
    expect(Buffer.byteLength(sent)).toBe(MAX_CONTENT_BYTES);
    expect(sent.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it('should fail with BUDGET_EXHAUSTED and call nothing when the first call is denied', async () => {
    const denial: BudgetDenial = { scope: 'USER', period: 'DAILY', exceeded: 'requests' };
    const { input, requests, steps } = loopInput([{ content: 'never' }], { budget: { preflight: async () => denial, record: async () => undefined } });
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'FAILED', terminationReason: 'BUDGET_EXHAUSTED', iterations: 0 });
    expect(requests).toHaveLength(0);
    expect(steps).toHaveLength(0);
  });

  it('should end a run denied mid-loop truncated with BUDGET_EXHAUSTED, keeping the partial trace', async () => {
    let calls = 0;
    const denial: BudgetDenial = { scope: 'CONFIGURATION', period: 'MONTHLY', exceeded: 'cost' };
    const { input, steps } = loopInput([{ calls: [{ name: 'lookup' }] }, { content: 'never' }], {
      budget: { preflight: async () => (calls++ === 0 ? null : denial), record: async () => undefined },
    });
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'COMPLETED', terminationReason: 'BUDGET_EXHAUSTED', truncated: true, iterations: 1 });
    expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM', 'TOOL']);
    expect(outcome.usage.promptTokens).toBe(100);
  });

  it('should fail with PROVIDER_FAILED and a generic message, logging the detail', async () => {
    const { input, logs } = loopInput([new ProviderError('openai', 'http', 500)]);
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED', errorMessage: expect.not.stringContaining('500') });
    expect(logs.some((entry) => entry.msg === 'provider call failed')).toBe(true);
  });

  it('should end CANCELLED at the next step boundary when aborted during a tool call', async () => {
    const controller = new AbortController();
    const slow = makeTool('lookup', async () => {
      controller.abort();
      return ToolResult.text('finished anyway');
    });
    const { input, requests, steps } = loopInput([{ calls: [{ name: 'lookup' }] }, { content: 'never' }], { tools: [slow], allow: null, signal: controller.signal });
    const outcome = await runLoop(input);
    expect(outcome).toMatchObject({ status: 'CANCELLED', terminationReason: 'CANCELLED', iterations: 1 });
    expect(requests).toHaveLength(1);
    expect(steps.at(-1)?.kind).toBe('TOOL');
  });

  it('should propagate unexpected errors (a bug is not a provider failure)', async () => {
    const { input } = loopInput([{ content: 'x' }], { onStep: () => Promise.reject(new TypeError('bug')) });
    await expect(runLoop(input)).rejects.toThrow('bug');
  });
});

describe('runLoop suspension for write tools', () => {
  const write = makeTool('update_record', async () => ToolResult.text('written'), { effect: 'write', group: 'editing', preview: async () => 'change x → y' });

  it('should suspend before ANY call of a turn that names an offered write tool', async () => {
    const { input, steps } = loopInput([{ calls: [{ name: 'lookup' }, { name: 'update_record' }] }], { tools: [lookup, write], allow: null });
    const outcome = await runLoop(input);
    expect(outcome.status).toBe('WAITING_FOR_APPROVAL');
    expect(steps.map((step) => step.kind)).toEqual(['REQUEST', 'LLM']);
    expect(write.execute).not.toHaveBeenCalled();
    expect(outcome.suspension?.previews).toEqual([{ position: 1, callId: 'c1_1', toolName: 'update_record', preview: 'change x → y' }]);
    expect(outcome.suspension?.calls.map((call) => call.name)).toEqual(['lookup', 'update_record']);
    expect(outcome.suspension?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(outcome.suspension)).not.toMatch(/artifact/i);
  });

  it('should never suspend for a write tool that is not offered: it is refused as usual', async () => {
    const { input, steps } = loopInput([{ calls: [{ name: 'update_record' }] }, { content: 'ok' }], { tools: [lookup, write], allow: ['lookup'] });
    const outcome = await runLoop(input);
    expect(outcome.status).toBe('COMPLETED');
    expect(steps.find((step) => step.kind === 'TOOL')).toMatchObject({ toolResult: 'Error: tool "update_record" not permitted' });
    expect(write.execute).not.toHaveBeenCalled();
  });

  it('should show a failing or empty preview as such', async () => {
    const failing = makeTool('update_record', async () => ToolResult.text('x'), { effect: 'write', preview: async () => Promise.reject(new Error('db down')) });
    const { input } = loopInput([{ calls: [{ name: 'update_record' }] }], { tools: [failing], allow: null });
    expect((await runLoop(input)).suspension?.previews[0]?.preview).toBe('Preview failed: the tool could not describe this change.');
    const empty = makeTool('update_record', async () => ToolResult.text('x'), { effect: 'write', preview: async () => '  ' });
    const second = loopInput([{ calls: [{ name: 'update_record' }] }], { tools: [empty], allow: null });
    expect((await runLoop(second.input)).suspension?.previews[0]?.preview).toBe('(the tool returned an empty preview)');
  });

  it('should change the digest when any argument of the turn changes', async () => {
    const { turnDigest } = await import('../../src/runtime/approval.ts');
    const base = [{ id: 'a', name: 'update_record', arguments: { table: 't', changes: { x: '1' } } }];
    expect(turnDigest(base)).toBe(turnDigest([{ id: 'a', name: 'update_record', arguments: { changes: { x: '1' }, table: 't' } }]));
    expect(turnDigest(base)).not.toBe(turnDigest([{ id: 'a', name: 'update_record', arguments: { table: 't', changes: { x: '2' } } }]));
  });
});

describe('runLoop at the provider boundary', () => {
  /** A provider that answers verbatim what a hostile or broken server would send. */
  function answering(...completions: Completion[]): LlmProvider {
    return { kind: 'TEST', complete: async () => completions.shift() ?? { content: 'done', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 }, finishReason: 'stop' } };
  }
  const turn = (calls: { id: string; name: string; arguments: Record<string, unknown> }[], usage = { promptTokens: 10, completionTokens: 1 }): Completion => ({
    content: '',
    toolCalls: calls,
    usage,
    finishReason: 'tool_calls',
  });

  it('should give every call of a turn its own id when the model repeats one, and bind each preview to its own call', async () => {
    const write = makeTool('update_record', async () => ToolResult.text('written'), {
      effect: 'write',
      group: 'editing',
      preview: async (args: { table?: string }) => `change ${args.table}`,
    });
    const provider = answering(
      turn([
        { id: 'call_X', name: 'update_record', arguments: { table: 'row-12' } },
        { id: 'call_X', name: 'update_record', arguments: { table: 'row-13' } },
        { id: '', name: 'update_record', arguments: { table: 'row-14' } },
      ]),
    );
    const { input } = loopInput([], { tools: [write], allow: null, provider });
    const outcome = await runLoop(input);
    const ids = outcome.suspension!.calls.map((call) => call.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe('call_X');
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    const previewOf = (id: string) => outcome.suspension!.previews.find((preview) => preview.callId === id)?.preview;
    expect(ids.map(previewOf)).toEqual(['change row-12', 'change row-13', 'change row-14']);
  });

  it('should answer each repeated id once on replay, in call order', async () => {
    const requests: CompletionRequest[] = [];
    const answers = answering(
      turn([
        { id: 'dup', name: 'lookup', arguments: { table: 'a' } },
        { id: 'dup', name: 'lookup', arguments: { table: 'b' } },
      ]),
    );
    const provider: LlmProvider = {
      kind: 'TEST',
      complete: (request) => {
        requests.push(structuredClone({ ...request, signal: undefined }) as unknown as CompletionRequest);
        return answers.complete(request);
      },
    };
    const { input, steps } = loopInput([], { provider });
    expect((await runLoop(input)).status).toBe('COMPLETED');
    const toolSteps = steps.filter((step) => step.kind === 'TOOL');
    expect(toolSteps.map((step) => step.toolCallId)).toEqual(['dup', 'dup_2']);
    const replay = requests[1]!.messages;
    const assistant = replay.find((message) => message.role === 'assistant');
    expect(assistant && assistant.role === 'assistant' ? assistant.toolCalls.map((call) => call.id) : null).toEqual(['dup', 'dup_2']);
    expect(replay.flatMap((message) => (message.role === 'tool' ? [[message.toolCallId, message.content]] : []))).toEqual([
      ['dup', 'rows of a'],
      ['dup_2', 'rows of b'],
    ]);
  });

  for (const [label, usage] of [
    ['fractional', { promptTokens: 1.5, completionTokens: 1 }],
    ['beyond 2^53', { promptTokens: 2 ** 53 + 2, completionTokens: 1 }],
    ['huge', { promptTokens: 1e20, completionTokens: 1 }],
    ['negative', { promptTokens: -1_000_000, completionTokens: 1 }],
    ['not a number', { promptTokens: Number.NaN, completionTokens: 1 }],
  ] as const) {
    it(`should fail the run as PROVIDER_FAILED, recording nothing, when the provider reports ${label} token counts`, async () => {
      const { input, steps, recorded, logs } = loopInput([], { provider: answering({ content: 'hi', toolCalls: [], usage, finishReason: 'stop' }) });
      const outcome = await runLoop(input);
      expect(outcome).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED' });
      expect(outcome.usage).toEqual({ promptTokens: 0, completionTokens: 0, cost: 0 });
      expect(recorded).toEqual([]);
      expect(steps.map((step) => step.kind)).toEqual(['REQUEST']);
      expect(logs.some((line) => line.msg === 'provider reported invalid token counts')).toBe(true);
    });
  }
});

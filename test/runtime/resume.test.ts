import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { emptyToolState } from '../../src/access/availability.ts';
import type { GateInput } from '../../src/access/gate.ts';
import { type RunBusEvent } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { Completion, CompletionRequest, LlmProvider } from '../../src/runtime/llm.ts';
import { continueLoop, resumeLoop, runLoop } from '../../src/runtime/loop.ts';
import { LoopHandedOver, type LoopInput } from '../../src/runtime/loop-session.ts';
import type { StoredStep } from '../../src/runtime/stored-step.ts';
import { interruptedOutcomeError, type ResumePoint } from '../../src/runtime/resume-point.ts';
import type { RunOutcome, RunStep } from '../../src/runtime/run.ts';
import { createRunRecorder, LeaseLostError, type RunRepository, type StepLease } from '../../src/runtime/run-recorder.ts';
import { createRegistry } from '../../src/tools/registry.ts';
import { ToolResult } from '../../src/tools/result.ts';
import type { Actor, Tool } from '../../src/tools/tool.ts';

/**
 * Durable runs (DESIGN.md section 8c), the pure part: which resume point the loop hands over with
 * each step, how `continueLoop` goes on from each kind of point, the exactly-once rule for writes,
 * the handover, and the recorder's behaviour once the lease is lost.
 */

const USER: Actor = { id: 'u', name: 'user', isAdmin: false };
const PRICES = { inputPricePerMTok: 1, outputPricePerMTok: 2 };
/** The priced usage of one scripted call (100 prompt tokens, 10 completion tokens). */
const CALL_COST = (100 * 1 + 10 * 2) / 1e6;

type Scripted = { content?: string; calls?: { name: string; arguments?: Record<string, unknown> }[] };

/**
 * A provider answering from a script; records each request. `idPrefix` keeps call ids of a resumed
 * pass apart from those of the first pass; `during` runs while a call is in flight.
 */
function scriptedProvider(script: Scripted[], options: { idPrefix?: string; during?: (request: CompletionRequest) => Promise<void> } = {}) {
  const requests: CompletionRequest[] = [];
  const signals: AbortSignal[] = [];
  const provider: LlmProvider = {
    kind: 'TEST',
    async complete(request) {
      requests.push(structuredClone({ ...request, signal: undefined }) as unknown as CompletionRequest);
      signals.push(request.signal);
      await options.during?.(request);
      request.signal.throwIfAborted();
      const next = script.shift() ?? { content: 'out of script' };
      const toolCalls = (next.calls ?? []).map((call, index) => ({ id: `${options.idPrefix ?? 'c'}${requests.length}_${index}`, name: call.name, arguments: call.arguments ?? {} }));
      return {
        content: next.content ?? '',
        toolCalls,
        usage: { promptTokens: 100, completionTokens: 10 },
        finishReason: toolCalls.length ? 'tool_calls' : 'stop',
      } satisfies Completion;
    },
  };
  return { provider, requests, signals };
}

/** Fresh tools per test, so that their executions can be counted; `events` records the order of executions. */
function tools(events: string[] = []) {
  const lookup: Tool = {
    name: 'lookup',
    description: 'reads rows',
    group: 'content',
    parameters: z.object({ table: z.string().optional() }),
    enabledByDefault: true,
    requiresAdmin: false,
    execute: vi.fn(async (args: { table?: string }) => {
      events.push(`execute lookup ${args.table ?? ''}`);
      return ToolResult.text(`rows of ${args.table ?? 'nothing'}`);
    }),
  };
  const write: Tool = {
    name: 'update_record',
    description: 'changes a record',
    group: 'editing',
    effect: 'write',
    preview: async () => 'change x → y',
    parameters: z.object({ id: z.string().optional() }),
    enabledByDefault: true,
    requiresAdmin: false,
    execute: vi.fn(async () => {
      events.push('execute update_record');
      return ToolResult.text('written');
    }),
  };
  return { lookup, write };
}

type Handed = { step: RunStep; point: ResumePoint | undefined };

function loopInput(
  script: Scripted[],
  options: { tools: Tool[]; durable?: boolean; checkpoint?: LoopInput['checkpoint']; handover?: AbortSignal; idPrefix?: string; during?: (request: CompletionRequest) => Promise<void> },
) {
  const registry = createRegistry([{ source: 'test', tools: options.tools }]);
  const { provider, requests, signals } = scriptedProvider(script, options);
  const handed: Handed[] = [];
  const checkpoints: ResumePoint[] = [];
  const log = () => undefined;
  const gate: GateInput = { registry, state: emptyToolState(), actor: USER, allowList: null };
  const checkpoint =
    options.checkpoint ??
    (options.durable
      ? async (point: ResumePoint) => {
          checkpoints.push(point);
        }
      : undefined);
  const input: LoopInput = {
    runId: 'run-1',
    prompt: 'How many customers?',
    settings: { systemPrompt: 'Be brief.', temperature: null, maxTokens: 100, maxIterations: 5, quarantineToolOutput: false },
    model: { providerModelId: 'm-1', ...PRICES },
    provider,
    registry,
    gate,
    budget: { preflight: async () => null, record: async () => undefined },
    toolData: {},
    logger: { info: log, warn: log, error: log },
    signal: new AbortController().signal,
    onStep: (step, point) => void handed.push({ step, point }),
    ...(checkpoint ? { checkpoint } : {}),
    ...(options.handover ? { handover: options.handover } : {}),
  };
  return { input, requests, signals, handed, checkpoints, steps: () => handed.map((entry) => entry.step) };
}

const shape = (steps: readonly RunStep[]) => steps.map((step) => `${step.kind}:${step.round}`);
const toolMessages = (request: CompletionRequest) =>
  request.messages.flatMap((message) => (message.role === 'tool' ? [{ toolCallId: message.toolCallId, content: message.content }] : []));
const executions = (tool: Tool) => (tool.execute as ReturnType<typeof vi.fn>).mock.calls.length;

/** Two reads in round 1, then an answer: the resume points a durable first pass hands over. */
async function firstPass() {
  const { lookup } = tools();
  const run = loopInput([{ calls: [{ name: 'lookup', arguments: { table: 'a' } }, { name: 'lookup', arguments: { table: 'b' } }] }, { content: 'Done.' }], {
    tools: [lookup],
    durable: true,
  });
  const outcome = await runLoop(run.input);
  return { ...run, outcome };
}

describe('resume points handed over by a durable run', () => {
  it('should hand a call point with the first REQUEST, an answered point with each LLM step and a tools point with the turn’s last TOOL step', async () => {
    const { handed, outcome } = await firstPass();
    expect(outcome).toMatchObject({ status: 'COMPLETED', iterations: 2, finalContent: 'Done.' });
    expect(shape(handed.map((entry) => entry.step))).toEqual(['REQUEST:1', 'LLM:1', 'TOOL:1', 'TOOL:1', 'REQUEST:2', 'LLM:2']);
    const points = handed.map((entry) => entry.point);

    expect(points[0]).toMatchObject({ at: 'call', round: 1, state: { iterations: 0, usage: { promptTokens: 0, completionTokens: 0, cost: 0 } } });
    expect(points[0]!.state.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'How many customers?' },
    ]);

    const [first, second] = [
      { id: 'c1_0', name: 'lookup', arguments: { table: 'a' } },
      { id: 'c1_1', name: 'lookup', arguments: { table: 'b' } },
    ];
    expect(points[1]).toEqual({
      at: 'answered',
      round: 1,
      state: expect.objectContaining({ usage: { promptTokens: 100, completionTokens: 10, cost: expect.closeTo(CALL_COST, 12) } }),
      answer: { content: '', toolCalls: [first, second] },
    });

    // A read recorded before the turn's last is not a point (it is run again after a takeover).
    expect(points[2]).toBeUndefined();
    expect(points[3]).toMatchObject({ at: 'tools', round: 1, mode: 'run', calls: [first, second], started: [], remoteBudgetSpent: [false, false] });
    expect(points[3]!.at === 'tools' && points[3]!.done).toEqual([
      { callId: 'c1_0', content: 'rows of a', isError: false },
      { callId: 'c1_1', content: 'rows of b', isError: false },
    ]);
    // The transcript of a tools point ends with the assistant message that asked for the calls.
    expect(points[3]!.state.messages.at(-1)).toEqual({ role: 'assistant', content: '', toolCalls: [first, second] });

    // Only the first REQUEST of a pass carries a point; every LLM step carries the usage so far.
    expect(points[4]).toBeUndefined();
    expect(points[5]).toMatchObject({ at: 'answered', round: 2, answer: { content: 'Done.', toolCalls: [] } });
    expect(points[5]!.state.usage).toEqual({ promptTokens: 200, completionTokens: 20, cost: expect.closeTo(2 * CALL_COST, 12) });
  });

  it('should hand no resume point at all when the run is not durable (no checkpoint)', async () => {
    const { lookup } = tools();
    const { input, handed } = loopInput([{ calls: [{ name: 'lookup' }] }, { content: 'Done.' }], { tools: [lookup] });
    await runLoop(input);
    expect(handed).toHaveLength(5);
    expect(handed.map((entry) => entry.point)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });
});

describe('continueLoop', () => {
  it('should make the call of a call point again, with the transcript it stored', async () => {
    const { handed } = await firstPass();
    const point = handed[0]!.point!;
    const { lookup } = tools();
    const again = loopInput([{ content: 'Twenty.' }], { tools: [lookup], durable: true });
    const outcome = await continueLoop(again.input, point);
    expect(again.requests).toHaveLength(1);
    expect(again.requests[0]!.messages).toEqual(point.state.messages);
    expect(shape(again.steps())).toEqual(['REQUEST:1', 'LLM:1']);
    expect(outcome).toMatchObject({ status: 'COMPLETED', iterations: 1, finalContent: 'Twenty.' });
  });

  it('should make the call of a later round again: a resumed pass hands a call point with its first REQUEST', async () => {
    const { handed } = await firstPass();
    const resumed = loopInput([{ content: 'Done.' }], { tools: [tools().lookup], durable: true });
    await continueLoop(resumed.input, handed[3]!.point!); // every call of round 1 recorded
    const callPoint = resumed.handed.find((entry) => entry.step.kind === 'REQUEST')!.point!;
    expect(callPoint).toMatchObject({ at: 'call', round: 2, state: { iterations: 1 } });

    const again = loopInput([{ content: 'Done at last.' }], { tools: [tools().lookup], durable: true });
    const outcome = await continueLoop(again.input, callPoint);
    expect(again.requests).toHaveLength(1);
    expect(again.requests[0]!.messages).toEqual(callPoint.state.messages);
    expect(toolMessages(again.requests[0]!)).toEqual([
      { toolCallId: 'c1_0', content: 'rows of a' },
      { toolCallId: 'c1_1', content: 'rows of b' },
    ]);
    expect(shape(again.steps())).toEqual(['REQUEST:2', 'LLM:2']);
    expect(outcome).toMatchObject({ status: 'COMPLETED', iterations: 2, finalContent: 'Done at last.' });
  });

  it('should not ask for an answer it stored (answered point): the stored calls run and the run goes on with the next round', async () => {
    const { handed } = await firstPass();
    const point = handed[1]!.point!;
    const { lookup } = tools();
    const next = loopInput([{ content: 'Done after resume.' }], { tools: [lookup], durable: true });
    const outcome = await continueLoop(next.input, point);
    // One provider call: round 2. Round 1's answer came from the point.
    expect(next.requests).toHaveLength(1);
    expect(shape(next.steps())).toEqual(['TOOL:1', 'TOOL:1', 'REQUEST:2', 'LLM:2']);
    expect(executions(lookup)).toBe(2);
    expect(toolMessages(next.requests[0]!)).toEqual([
      { toolCallId: 'c1_0', content: 'rows of a' },
      { toolCallId: 'c1_1', content: 'rows of b' },
    ]);
    expect(outcome).toMatchObject({ status: 'COMPLETED', iterations: 2, finalContent: 'Done after resume.' });
    // The usage of the stored answer is kept: two calls in all.
    expect(outcome.usage).toEqual({ promptTokens: 200, completionTokens: 20, cost: expect.closeTo(2 * CALL_COST, 12) });
  });

  it('should not run a call already in done again (tools point), run the others, and give the model every result in call order', async () => {
    const { handed } = await firstPass();
    // The turn's point with only its first result (a point mid-turn, as a write's result carries one).
    const last = handed[3]!.point!;
    if (last.at !== 'tools') throw new Error('expected a tools point');
    const afterFirst: ResumePoint = { ...last, done: last.done.slice(0, 1) };
    const { lookup } = tools();
    const next = loopInput([{ content: 'Done.' }], { tools: [lookup], durable: true });
    await continueLoop(next.input, afterFirst);
    expect(executions(lookup)).toBe(1);
    expect((lookup.execute as ReturnType<typeof vi.fn>).mock.calls[0]![0]).toEqual({ table: 'b' });
    expect(shape(next.steps())).toEqual(['TOOL:1', 'REQUEST:2', 'LLM:2']);
    expect(next.steps()[0]).toMatchObject({ kind: 'TOOL', toolCallId: 'c1_1', toolResult: 'rows of b' });
    expect(toolMessages(next.requests[0]!)).toEqual([
      { toolCallId: 'c1_0', content: 'rows of a' },
      { toolCallId: 'c1_1', content: 'rows of b' },
    ]);
  });

  it('should keep call order in the transcript when only a later call of the turn was recorded', async () => {
    const { handed } = await firstPass();
    const point = handed[3]!.point!;
    if (point.at !== 'tools') throw new Error('expected a tools point');
    const laterOnly: ResumePoint = { ...point, done: [{ callId: 'c1_1', content: 'stored rows of b', isError: false }] };
    const { lookup } = tools();
    const next = loopInput([{ content: 'Done.' }], { tools: [lookup], durable: true });
    await continueLoop(next.input, laterOnly);
    expect((lookup.execute as ReturnType<typeof vi.fn>).mock.calls.map((call) => call[0])).toEqual([{ table: 'a' }]);
    expect(toolMessages(next.requests[0]!)).toEqual([
      { toolCallId: 'c1_0', content: 'rows of a' },
      { toolCallId: 'c1_1', content: 'stored rows of b' },
    ]);
    // The next point of the turn holds both results.
    const toolsPoint = next.handed.find((entry) => entry.step.kind === 'TOOL')!.point;
    expect(toolsPoint?.at === 'tools' && toolsPoint.done.map((result) => result.callId).sort()).toEqual(['c1_0', 'c1_1']);
  });
});

describe('write tools run at most once', () => {
  /** A first pass that suspends on a turn of a read and a write (round 1). */
  async function suspended() {
    const { lookup, write } = tools();
    const run = loopInput([{ calls: [{ name: 'lookup', arguments: { table: 'a' } }, { name: 'update_record', arguments: { id: 'x' } }] }], { tools: [lookup, write], durable: true });
    const outcome = await runLoop(run.input);
    expect(outcome.status).toBe('WAITING_FOR_APPROVAL');
    expect(executions(write)).toBe(0);
    return outcome.suspension!;
  }

  it('should store the checkpoint naming the write as started BEFORE the write runs', async () => {
    const suspension = await suspended();
    const events: string[] = [];
    const { lookup, write } = tools(events);
    const stored: ResumePoint[] = [];
    const approved = loopInput([{ content: 'Updated.' }], {
      tools: [lookup, write],
      checkpoint: async (point) => {
        events.push('checkpoint asked');
        await new Promise((resolve) => setTimeout(resolve, 20));
        stored.push(point);
        events.push('checkpoint stored');
      },
    });
    const outcome = await resumeLoop(approved.input, suspension, { approved: true });
    expect(outcome).toMatchObject({ status: 'COMPLETED', finalContent: 'Updated.' });
    expect(events.slice(0, 2)).toEqual(['checkpoint asked', 'checkpoint stored']);
    expect(events.slice(2).sort()).toEqual(['execute lookup a', 'execute update_record']);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ at: 'tools', round: 1, mode: 'approved', done: [], started: ['c1_1'] });
  });

  it('should run no call of the turn when the checkpoint cannot be stored', async () => {
    const suspension = await suspended();
    const { lookup, write } = tools();
    const approved = loopInput([{ content: 'never' }], {
      tools: [lookup, write],
      checkpoint: async () => {
        throw new Error('database unreachable');
      },
    });
    await expect(resumeLoop(approved.input, suspension, { approved: true })).rejects.toThrow('database unreachable');
    expect(executions(write)).toBe(0);
    expect(executions(lookup)).toBe(0);
    expect(approved.requests).toHaveLength(0);
  });

  it('should never run a started write again after a takeover: outcome unknown, the exact error to the model; a read not done runs again', async () => {
    const suspension = await suspended();
    // The first process stored the checkpoint, then died before anything of the turn was recorded.
    let crashedAt: ResumePoint | undefined;
    const first = tools();
    const dying = loopInput([], {
      tools: [first.lookup, first.write],
      checkpoint: async (point) => {
        crashedAt = point;
        throw new Error('the process died');
      },
    });
    await expect(resumeLoop(dying.input, suspension, { approved: true })).rejects.toThrow('the process died');
    expect(crashedAt).toMatchObject({ at: 'tools', started: ['c1_1'], done: [] });

    const { lookup, write } = tools();
    const successor = loopInput([{ content: 'I will check the record first.' }], { tools: [lookup, write], durable: true, idPrefix: 'next' });
    const outcome = await continueLoop(successor.input, crashedAt!);
    expect(executions(write)).toBe(0);
    expect(executions(lookup)).toBe(1);
    const toolSteps = successor.steps().filter((step) => step.kind === 'TOOL');
    expect(toolSteps).toHaveLength(2);
    const [read, written] = [toolSteps.find((step) => step.toolCallId === 'c1_0'), toolSteps.find((step) => step.toolCallId === 'c1_1')];
    expect(written).toMatchObject({
      toolName: 'update_record',
      toolIsError: true,
      outcomeUnknown: true,
      toolResult: 'Error: tool "update_record" was interrupted: outcome unknown. Check before trying again.',
    });
    expect(read).toMatchObject({ toolName: 'lookup', toolIsError: false, toolResult: 'rows of a' });
    expect(read).not.toHaveProperty('outcomeUnknown');
    expect(toolMessages(successor.requests[0]!)).toEqual([
      { toolCallId: 'c1_0', content: 'rows of a' },
      { toolCallId: 'c1_1', content: interruptedOutcomeError('update_record') },
    ]);
    expect(interruptedOutcomeError('update_record')).toBe('Error: tool "update_record" was interrupted: outcome unknown. Check before trying again.');
    // No second checkpoint for a write that will never run.
    expect(successor.checkpoints).toEqual([]);
    expect(outcome).toMatchObject({ status: 'COMPLETED', finalContent: 'I will check the record first.' });
  });
});

describe('handover', () => {
  it('should stop with LoopHandedOver at the next step boundary without cancelling the call in flight', async () => {
    const handover = new AbortController();
    const { lookup } = tools();
    let signalAbortedDuringCall: boolean | undefined;
    const run = loopInput([{ calls: [{ name: 'lookup' }] }, { content: 'never' }], {
      tools: [lookup],
      durable: true,
      handover: handover.signal,
      during: async (request) => {
        if (handover.signal.aborted) return;
        handover.abort();
        await new Promise((resolve) => setTimeout(resolve, 10));
        signalAbortedDuringCall = request.signal.aborted;
      },
    });
    await expect(runLoop(run.input)).rejects.toBeInstanceOf(LoopHandedOver);
    expect(signalAbortedDuringCall).toBe(false);
    expect(run.signals[0]!.aborted).toBe(false);
    // The answer in flight was stored with its point; nothing after the boundary ran.
    expect(shape(run.steps())).toEqual(['REQUEST:1', 'LLM:1']);
    expect(run.handed[1]!.point).toMatchObject({ at: 'answered', round: 1 });
    expect(run.requests).toHaveLength(1);
    expect(executions(lookup)).toBe(0);
  });
});

const LLM_STEP: RunStep = {
  kind: 'LLM',
  round: 1,
  content: 'answer',
  thinking: null,
  requestedToolCalls: [],
  usage: { promptTokens: 1, completionTokens: 2, cost: 0 },
  finishReason: 'stop',
  durationMs: 3,
};
const OUTCOME: RunOutcome = {
  status: 'COMPLETED',
  terminationReason: 'COMPLETED',
  truncated: false,
  iterations: 1,
  finalContent: 'answer',
  usage: { promptTokens: 1, completionTokens: 2, cost: 0 },
  errorMessage: null,
};

describe('run recorder with a lease', () => {
  /** Steps whose sequence is in `refused` are refused as the trigger refuses a stale epoch. */
  function leasedRepository(refused: ReadonlySet<number>) {
    const inserted: { sequence: number; step: StoredStep; lease: StepLease | undefined }[] = [];
    const settled: number[] = [];
    const repository: RunRepository = {
      async insertStep(runId, sequence, step, lease) {
        if (refused.has(sequence)) throw new LeaseLostError(runId);
        inserted.push({ sequence, step, lease });
      },
      async settle(_runId, _outcome, _stored, epoch) {
        settled.push(epoch ?? -1);
        return { id: 'r' };
      },
      async settleWithoutOutcome() {
        throw new Error('not expected');
      },
      async markAuditIncomplete() {
        throw new Error('not expected: a lost lease is not an incomplete audit');
      },
    };
    return { repository, inserted, settled };
  }

  it('should publish nothing from the step the lease was found lost, call onLost once and refuse to settle', async () => {
    const bus = createRunEventBus();
    const events: RunBusEvent[] = [];
    void (async () => {
      for await (const event of bus.subscribe('r1')) events.push(event);
    })();
    const memory = leasedRepository(new Set([2, 4, 5]));
    let lostCalls = 0;
    const sealed: ResumePoint[] = [];
    const recorder = createRunRecorder({
      runId: 'r1',
      level: 'FULL',
      repository: memory.repository,
      bus,
      logger: { warn: () => undefined, error: () => undefined },
      lease: {
        epoch: 3,
        seal: (point) => (sealed.push(point), `sealed-${sealed.length}`),
        onLost: () => void (lostCalls += 1),
      },
    });
    const point: ResumePoint = { at: 'call', round: 1, state: { messages: [], iterations: 0, usage: OUTCOME.usage, lastContent: null } };
    await recorder.recordStep(LLM_STEP, point);
    await recorder.recordStep({ ...LLM_STEP, round: 2 });
    await recorder.recordStep({ ...LLM_STEP, round: 3 });
    await recorder.recordStep({ ...LLM_STEP, round: 4 });
    await recorder.flushed();
    await new Promise((resolve) => setImmediate(resolve));

    // Every write carries the epoch; the step that reaches a point carries it sealed.
    expect(memory.inserted.map((entry) => [entry.sequence, entry.lease])).toEqual([
      [1, { epoch: 3, checkpoint: 'sealed-1' }],
      [3, { epoch: 3 }],
    ]);
    expect(sealed).toEqual([point]);
    // Step 3 was stored (a write racing the takeover) but is not published: the successor publishes what it stores.
    expect(events.map((event) => (event.type === 'step' ? event.sequence : event.type))).toEqual([1]);
    expect(recorder.leaseLost).toBe(true);
    expect(lostCalls).toBe(1);
    expect(recorder.auditIncomplete).toBe(false);
    // A required step (an approval decision) refused the same way throws, and is not published either.
    await expect(recorder.recordRequiredStep({ ...LLM_STEP, round: 5 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(lostCalls).toBe(1);

    expect(await recorder.settle(OUTCOME)).toBe(false);
    expect(memory.settled).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map((event) => event.type)).toEqual(['step']);
  });

  it('should settle with its epoch while it holds the lease', async () => {
    const memory = leasedRepository(new Set());
    const recorder = createRunRecorder({
      runId: 'r2',
      level: 'FULL',
      repository: memory.repository,
      bus: createRunEventBus(),
      logger: { warn: () => undefined, error: () => undefined },
      lease: { epoch: 7, seal: () => 'sealed', onLost: () => undefined },
    });
    await recorder.recordStep(LLM_STEP);
    expect(await recorder.settle(OUTCOME)).toBe(true);
    expect(memory.settled).toEqual([7]);
    expect(recorder.leaseLost).toBe(false);
  });

  it('should stop when settling finds the lease lost: false, onLost once, no finished event', async () => {
    const bus = createRunEventBus();
    const events: RunBusEvent[] = [];
    void (async () => {
      for await (const event of bus.subscribe('r3')) events.push(event);
    })();
    let lostCalls = 0;
    let settleCalls = 0;
    const repository: RunRepository = {
      insertStep: async () => undefined,
      settle: async (runId) => {
        settleCalls += 1;
        throw new LeaseLostError(runId);
      },
      settleWithoutOutcome: async () => {
        throw new Error('not expected: the run belongs to another process');
      },
      markAuditIncomplete: async () => undefined,
    };
    const recorder = createRunRecorder({
      runId: 'r3',
      level: 'FULL',
      repository,
      bus,
      logger: { warn: () => undefined, error: () => undefined },
      retryDelaysMs: [1, 1],
      lease: { epoch: 1, seal: () => 'sealed', onLost: () => void (lostCalls += 1) },
    });
    expect(await recorder.settle(OUTCOME)).toBe(false);
    expect(settleCalls).toBe(1);
    expect(lostCalls).toBe(1);
    expect(recorder.leaseLost).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
  });
});

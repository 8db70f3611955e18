import { describe, expect, it } from 'vitest';
import { SUBSCRIBER_BUFFER, SubscriberOverflowError, type RunBusEvent } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import type { RunOutcome, RunStep } from '../../src/runtime/run.ts';
import type { StoredStep } from '../../src/runtime/stored-step.ts';
import { createRunRecorder, MAX_UNWRITTEN_STEPS, type RunRepository } from '../../src/runtime/run-recorder.ts';

const LLM_STEP: RunStep = {
  kind: 'LLM',
  round: 1,
  content: 'mail bob@example.com',
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
  finalContent: 'answer for bob@example.com',
  usage: { promptTokens: 1, completionTokens: 2, cost: 0 },
  errorMessage: null,
};

function memoryRepository(options: { failSteps?: boolean } = {}) {
  const steps: { runId: string; sequence: number; step: StoredStep }[] = [];
  const settled: { outcome: RunOutcome; stored: string | null }[] = [];
  let incomplete = 0;
  let open = true;
  const repository: RunRepository = {
    async insertStep(runId, sequence, step) {
      if (options.failSteps) throw new Error('disk full');
      steps.push({ runId, sequence, step });
    },
    async settle(runId, outcome, stored) {
      if (!open) return null;
      open = false;
      settled.push({ outcome, stored });
      return { id: runId };
    },
    async settleWithoutOutcome() {
      throw new Error('not expected: the outcome was stored');
    },
    async markAuditIncomplete() {
      incomplete += 1;
    },
  };
  return { repository, steps, settled, incomplete: () => incomplete };
}

function logger() {
  const lines: { level: string; msg?: string }[] = [];
  return { lines, warn: (_o: object, msg?: string) => void lines.push({ level: 'warn', msg }), error: (_o: object, msg?: string) => void lines.push({ level: 'error', msg }) };
}

describe('run recorder', () => {
  it('should store the filtered copy with increasing sequence numbers and publish after the write', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r1');
    const memory = memoryRepository();
    const recorder = createRunRecorder({ runId: 'r1', level: 'METADATA', repository: memory.repository, bus, logger: logger() });
    await recorder.recordStep(LLM_STEP);
    await recorder.recordStep({ ...LLM_STEP, round: 2 });
    await recorder.flushed();
    expect(memory.steps.map((entry) => entry.sequence)).toEqual([1, 2]);
    expect(memory.steps[0]!.step.content).toBeUndefined();
    expect(memory.steps[0]!.step.contentRedacted).toBe(true);
    const first = (await events.next()).value as Extract<RunBusEvent, { type: 'step' }>;
    expect(first).toMatchObject({ type: 'step', sequence: 1 });
    expect(first.full.content).toBe('mail bob@example.com');
    expect(first.filtered).toEqual(memory.steps[0]!.step);
  });

  it('should settle exactly once, storing the final answer at the run level and publishing the live one', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r2');
    const memory = memoryRepository();
    const log = logger();
    const recorder = createRunRecorder({ runId: 'r2', level: 'REDACTED', repository: memory.repository, bus, logger: log });
    expect(await recorder.settle(OUTCOME)).toBe(true);
    expect(await recorder.settle(OUTCOME)).toBe(false);
    expect(memory.settled).toHaveLength(1);
    expect(memory.settled[0]!.stored).toBe('answer for ***');
    expect(log.lines).toContainEqual({ level: 'warn', msg: 'refused to settle a run twice' });
    expect((await events.next()).value).toEqual({ type: 'finished', runId: 'r2', finalContent: 'answer for bob@example.com', run: { id: 'r2' }, publishedAt: expect.any(Number) });
  });

  it('should keep going when storage fails: log it, flag the audit trail once, still publish', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r3');
    const memory = memoryRepository({ failSteps: true });
    const log = logger();
    const recorder = createRunRecorder({ runId: 'r3', level: 'FULL', repository: memory.repository, bus, logger: log });
    await recorder.recordStep(LLM_STEP);
    await recorder.recordStep(LLM_STEP);
    await recorder.flushed();
    expect(recorder.auditIncomplete).toBe(true);
    expect(memory.incomplete()).toBe(1);
    expect(log.lines.filter((line) => line.level === 'error')).toHaveLength(2);
    expect((await events.next()).value).toMatchObject({ type: 'step', sequence: 1 });
    expect((await events.next()).value).toMatchObject({ type: 'step', sequence: 2 });
  });
});

describe('run recorder write-behind', () => {
  /** A repository whose step writes finish only when the test says so. */
  function manualRepository() {
    const writes: { sequence: number; finish(error?: Error): void }[] = [];
    const repository: RunRepository = {
      insertStep: (_runId, sequence) =>
        new Promise<void>((resolve, reject) => void writes.push({ sequence, finish: (error) => (error ? reject(error) : resolve()) })),
      settle: async () => true,
      settleWithoutOutcome: async () => true,
      markAuditIncomplete: async () => undefined,
    };
    return { repository, writes };
  }
  const published = (bus: ReturnType<typeof createRunEventBus>, runId: string) => {
    const sequences: number[] = [];
    void (async () => {
      for await (const event of bus.subscribe(runId)) if (event.type === 'step') sequences.push(event.sequence);
    })();
    return sequences;
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('should let the loop go on before the write, and publish in sequence order even when writes finish out of order', async () => {
    const bus = createRunEventBus();
    const seen = published(bus, 'w1');
    const { repository, writes } = manualRepository();
    const recorder = createRunRecorder({ runId: 'w1', level: 'FULL', repository, bus, logger: logger() });
    for (let round = 1; round <= 3; round++) await recorder.recordStep({ ...LLM_STEP, round });
    expect(writes.map((write) => write.sequence)).toEqual([1, 2, 3]);
    writes[2]!.finish();
    writes[1]!.finish();
    await tick();
    expect(seen).toEqual([]); // step 1 is not written yet: nothing after it may be published
    writes[0]!.finish();
    await recorder.flushed();
    await tick();
    expect(seen).toEqual([1, 2, 3]);
  });

  it(`should hold the loop once ${MAX_UNWRITTEN_STEPS} steps of the run wait for storage`, async () => {
    const { repository, writes } = manualRepository();
    const recorder = createRunRecorder({ runId: 'w2', level: 'FULL', repository, bus: createRunEventBus(), logger: logger() });
    for (let index = 1; index < MAX_UNWRITTEN_STEPS; index++) await recorder.recordStep(LLM_STEP);
    let returned = false;
    const held = recorder.recordStep(LLM_STEP).then(() => (returned = true));
    await tick();
    expect(returned).toBe(false);
    for (const write of writes) write.finish();
    await held;
    expect(returned).toBe(true);
  });

  it('should store a required step only after the steps queued before it, and settle only after all of them', async () => {
    const { repository, writes } = manualRepository();
    const bus = createRunEventBus();
    const events = bus.subscribe('w3');
    const recorder = createRunRecorder({ runId: 'w3', level: 'FULL', repository, bus, logger: logger() });
    await recorder.recordStep(LLM_STEP);
    const required = recorder.recordRequiredStep({ ...LLM_STEP, round: 2 });
    await tick();
    expect(writes.map((write) => write.sequence)).toEqual([1]);
    writes[0]!.finish();
    while (writes.length < 2) await tick();
    writes[1]!.finish();
    await required;
    const settled = recorder.settle(OUTCOME);
    expect((await events.next()).value).toMatchObject({ type: 'step', sequence: 1 });
    expect((await events.next()).value).toMatchObject({ type: 'step', sequence: 2 });
    expect(await settled).toBe(true);
    expect((await events.next()).value).toMatchObject({ type: 'finished' });
  });

  it('should ask storage to hurry whenever it waits for its steps (flushed, settle, required step)', async () => {
    let expedited = 0;
    const { repository, writes } = manualRepository();
    const recorder = createRunRecorder({ runId: 'w5', level: 'FULL', repository: { ...repository, expedite: () => void (expedited += 1) }, bus: createRunEventBus(), logger: logger() });
    await recorder.recordStep(LLM_STEP);
    expect(expedited).toBe(0); // the loop goes on: nobody waits yet
    const flushed = recorder.flushed();
    expect(expedited).toBe(1);
    writes[0]!.finish();
    await flushed;
    await recorder.settle(OUTCOME);
    expect(expedited).toBe(2);
  });

  it('should throw from a required step that cannot be stored', async () => {
    const { repository, writes } = manualRepository();
    const recorder = createRunRecorder({ runId: 'w4', level: 'FULL', repository, bus: createRunEventBus(), logger: logger() });
    const required = recorder.recordRequiredStep(LLM_STEP);
    while (writes.length < 1) await tick();
    writes[0]!.finish(new Error('disk full'));
    await expect(required).rejects.toThrow('disk full');
  });
});

describe('run event bus', () => {
  it('should deliver to a subscriber registered before publishing, even before it starts reading', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r');
    bus.publish({ type: 'started', runId: 'r', run: null });
    bus.publish({ type: 'started', runId: 'other', run: null });
    expect((await events.next()).value).toEqual({ type: 'started', runId: 'r', run: null, publishedAt: expect.any(Number) });
  });

  it('should unsubscribe on return', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r');
    expect(bus.subscriberCount()).toBe(1);
    const pending = events.next();
    await events.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(bus.subscriberCount()).toBe(0);
  });

  it('should cut off a subscriber that falls too far behind, after delivering what it buffered', async () => {
    const bus = createRunEventBus();
    const events = bus.subscribe('r');
    for (let index = 0; index <= SUBSCRIBER_BUFFER; index++) bus.publish({ type: 'finished', runId: 'r', finalContent: String(index), run: null });
    let delivered = 0;
    await expect(
      (async () => {
        for await (const _event of events) delivered++;
      })(),
    ).rejects.toBeInstanceOf(SubscriberOverflowError);
    expect(delivered).toBe(SUBSCRIBER_BUFFER);
    expect(bus.subscriberCount()).toBe(0);
  });
});

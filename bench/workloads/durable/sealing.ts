/**
 * Durable runs, 3. the sealing alone, in this process: the resume point every step of a run carries,
 * sealed as the server seals it; the deterministic part of a checkpoint's cost.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createSecretBox } from '../../../src/db/secret-box.ts';
import type { ChatMessage } from '../../../src/runtime/llm.ts';
import type { ResumePoint } from '../../../src/runtime/resume-point.ts';
import { sealCheckpoint, type RunCheckpoint } from '../../../src/services/run-checkpoints.ts';
import { BENCH_PROMPT, BENCH_SYSTEM_PROMPT, BENCH_TOOL_NAME, benchLookup } from '../../lib/agent-tool.ts';

export interface SealingResult {
  /** Seals per run: the start, then the resume point of every stored step (at most one each). */
  readonly sealsPerRun: number;
  readonly microsecondsPerSeal: number;
  /** Per stored step (seals per run ÷ stored steps per run). */
  readonly microsecondsPerStep: number;
  readonly sealedBytesLastStep: number;
}

/**
 * Times `sealCheckpoint` (JSON, AES-256-GCM, base64: src/services/run-checkpoints.ts) on the
 * checkpoints one run of K tool rounds stores, in the transcript shape of the checkpoint-cost runs:
 * the deterministic part of what a checkpoint costs the server (the statement carrying it aside).
 */
export function measureSealing(k: number, runs: number): SealingResult {
  const secrets = createSecretBox(randomBytes(32));
  const settings = { systemPrompt: BENCH_SYSTEM_PROMPT, temperature: null, maxTokens: null, maxIterations: Math.max(5, k + 1), quarantineToolOutput: false };
  const checkpoints: RunCheckpoint[] = [{ start: { prompt: BENCH_PROMPT } }];
  const messages: ChatMessage[] = [
    { role: 'system', content: BENCH_SYSTEM_PROMPT },
    { role: 'user', content: BENCH_PROMPT },
  ];
  let usage = { promptTokens: 0, completionTokens: 0, cost: 0 };
  for (let round = 1; round <= k + 1; round++) {
    const state = () => ({ messages: [...messages], iterations: round - 1, usage, lastContent: null });
    const points: ResumePoint[] = [{ at: 'call', round, state: state() }];
    usage = { promptTokens: usage.promptTokens + 20 * messages.length, completionTokens: usage.completionTokens + 10, cost: usage.cost + 0.0001 };
    const call = { id: `call_${round}`, name: BENCH_TOOL_NAME, arguments: { n: round } };
    const answer = round <= k ? { content: '', toolCalls: [call] } : { content: `Final answer after ${k} tool rounds.`, toolCalls: [] };
    points.push({ at: 'answered', round, state: state(), answer });
    if (round <= k) {
      messages.push({ role: 'assistant', content: '', toolCalls: [call] });
      const result = { callId: call.id, content: benchLookup(round), isError: false };
      points.push({ at: 'tools', round, state: state(), calls: [call], mode: 'run', done: [result], started: [] });
      messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: result.content, isError: false });
    }
    checkpoints.push(...points.map((point) => ({ point, settings, allowList: [BENCH_TOOL_NAME] })));
  }
  const sealRun = () => {
    const runId = randomUUID();
    let last = '';
    for (const checkpoint of checkpoints) last = sealCheckpoint(secrets, runId, checkpoint);
    return last;
  };
  for (let run = 0; run < Math.ceil(runs / 4); run++) sealRun(); // warm-up
  let last = '';
  const started = performance.now();
  for (let run = 0; run < runs; run++) last = sealRun();
  const microsecondsPerSeal = ((performance.now() - started) * 1000) / (runs * checkpoints.length);
  return {
    sealsPerRun: checkpoints.length,
    microsecondsPerSeal,
    microsecondsPerStep: (microsecondsPerSeal * checkpoints.length) / (3 * k + 2),
    sealedBytesLastStep: Buffer.byteLength(last),
  };
}

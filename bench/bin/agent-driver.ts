/**
 * Runs batches of agent runs for workload 1, in its own process so that its CPU and peak RSS are
 * its own (the harness reads them from /proc). Variants:
 * - `bare`: fetch + tool + append, no GraphQL, no persistence: the floor any runtime pays;
 * - `ai-sdk`: the Vercel AI SDK peer, `generateText` with a step cap over `createOpenAI().chat()`;
 * - `airlock`: graphql-ws clients subscribing to `runAgent` on an Airlock server (another process).
 * A batch runs `runs` runs with `concurrency` workers and answers with its wall time and run times.
 */
import type { Client } from 'graphql-ws';
import { z } from 'zod';
import { serveDriver } from '../lib/children.ts';
import { connectGraphqlWs } from '../lib/ws-client.ts';
import {
  BENCH_PROMPT,
  BENCH_SYSTEM_PROMPT,
  BENCH_TOOL_DESCRIPTION,
  BENCH_TOOL_JSON_SCHEMA,
  BENCH_TOOL_NAME,
  benchLookup,
} from '../lib/agent-tool.ts';

export interface BatchRequest {
  readonly variant: 'bare' | 'ai-sdk' | 'airlock';
  readonly runs: number;
  readonly concurrency: number;
  readonly k: number;
  /** `http://127.0.0.1:<port>/v1` of the fake OpenAI server. */
  readonly fakeBaseUrl: string;
  readonly airlock?: { readonly wsUrl: string; readonly token: string; readonly configurationId: string };
}

export interface BatchResult {
  readonly wallMs: number;
  readonly runMs: number[];
  /** Provider calls observed, summed over the runs (K + 1 per run when all went well). */
  readonly steps: number;
}

type RunOnce = () => Promise<number>;

// ── (a) bare loop ───────────────────────────────────────────────────────────
const BARE_TOOLS = [{ type: 'function', function: { name: BENCH_TOOL_NAME, description: BENCH_TOOL_DESCRIPTION, parameters: BENCH_TOOL_JSON_SCHEMA } }];

interface WireToolCall {
  id: string;
  function: { name: string; arguments: string };
}

function bareRun(baseUrl: string, k: number): RunOnce {
  return async () => {
    const messages: Record<string, unknown>[] = [
      { role: 'system', content: BENCH_SYSTEM_PROMPT },
      { role: 'user', content: BENCH_PROMPT },
    ];
    for (let call = 1; ; call++) {
      const response = await fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: JSON.stringify({ model: `bench-k${k}`, messages, tools: BARE_TOOLS }),
      });
      if (!response.ok) throw new Error(`fake server answered ${response.status}`);
      const body = (await response.json()) as { choices: { message: { content: string | null; tool_calls?: WireToolCall[] } }[] };
      const message = body.choices[0]!.message;
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return call;
      messages.push(message as Record<string, unknown>);
      for (const toolCall of calls) {
        const args = JSON.parse(toolCall.function.arguments) as { n: number };
        messages.push({ role: 'tool', tool_call_id: toolCall.id, content: benchLookup(args.n) });
      }
    }
  };
}

// ── (b) Vercel AI SDK ───────────────────────────────────────────────────────
async function aiSdkRun(baseUrl: string, k: number): Promise<RunOnce> {
  const { generateText, stepCountIs, tool } = await import('ai');
  const { createOpenAI } = await import('@ai-sdk/openai');
  const provider = createOpenAI({ baseURL: baseUrl, apiKey: 'sk-bench' });
  const model = provider.chat(`bench-k${k}`);
  const tools = {
    [BENCH_TOOL_NAME]: tool({
      description: BENCH_TOOL_DESCRIPTION,
      inputSchema: z.object({ n: z.number().int().describe('The round number.') }),
      execute: async ({ n }) => benchLookup(n),
    }),
  };
  return async () => {
    const result = await generateText({
      model,
      system: BENCH_SYSTEM_PROMPT,
      prompt: BENCH_PROMPT,
      tools,
      stopWhen: stepCountIs(k + 1),
      maxRetries: 0,
    });
    return result.steps.length;
  };
}

// ── (c) Airlock over graphql-ws ─────────────────────────────────────────────
const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) {
  __typename
  ... on RunStepEvent { step { sequence kind round toolName contentRedacted contentLength } }
  ... on RunFinishedEvent { run { id status terminationReason iterations usage { totalTokens } } }
} }`;

function connectClients(wsUrl: string, token: string, count: number): Promise<Client[]> {
  return Promise.all(Array.from({ length: count }, () => connectGraphqlWs(wsUrl, token)));
}

function airlockRun(client: Client, configurationId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let finished: { status: string; iterations: number } | null = null;
    client.subscribe(
      { query: RUN_AGENT, variables: { input: { configurationId, prompt: BENCH_PROMPT } } },
      {
        next: (result) => {
          if (result.errors) return reject(new Error(JSON.stringify(result.errors)));
          const event = (result.data as { runAgent: { __typename: string; run?: { status: string; iterations: number } } }).runAgent;
          if (event.__typename === 'RunFinishedEvent') finished = event.run!;
        },
        error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
        complete: () => {
          if (!finished) return reject(new Error('runAgent completed without a RunFinishedEvent'));
          if (finished.status !== 'COMPLETED') return reject(new Error(`run ended ${finished.status}`));
          resolve(finished.iterations);
        },
      },
    );
  });
}

// ── the batch ───────────────────────────────────────────────────────────────
async function runBatch(request: BatchRequest): Promise<BatchResult> {
  let clients: Client[] = [];
  let runOnce: (worker: number) => Promise<number>;
  if (request.variant === 'bare') {
    const run = bareRun(request.fakeBaseUrl, request.k);
    runOnce = () => run();
  } else if (request.variant === 'ai-sdk') {
    const run = await aiSdkRun(request.fakeBaseUrl, request.k);
    runOnce = () => run();
  } else {
    const airlock = request.airlock;
    if (!airlock) throw new Error('the airlock variant needs the server address, a token and a configuration');
    // Connections are opened before the clock starts: the batch measures runs, not handshakes.
    clients = await connectClients(airlock.wsUrl, airlock.token, request.concurrency);
    runOnce = (worker) => airlockRun(clients[worker]!, airlock.configurationId);
  }
  const runMs: number[] = [];
  let steps = 0;
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: request.concurrency }, async (_, worker) => {
        while (next < request.runs) {
          next += 1;
          const runStarted = performance.now();
          const calls = await runOnce(worker);
          steps += calls;
          runMs.push(performance.now() - runStarted);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
  }
  const wallMs = performance.now() - started;
  const expected = request.runs * (request.k + 1);
  if (steps !== expected) throw new Error(`${request.variant}: ${steps} provider calls instead of ${expected}`);
  return { wallMs, runMs, steps };
}

serveDriver(async (message: { type: string } & BatchRequest) => {
  if (message.type === 'batch') return runBatch(message);
  throw new Error(`unknown request ${message.type}`);
});

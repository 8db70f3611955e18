/**
 * A zero-latency fake OpenAI-compatible Chat Completions server, run in its OWN process so that
 * its CPU never counts against the process being measured:
 *
 *   node --import tsx bench/bin/fake-openai.ts            # prints `listening <port>` once ready
 *
 * Script: a request that offers tools and holds fewer than K assistant tool-call turns is answered
 * with one call of the first offered tool (`{"n": <round>}`); anything else gets the final answer.
 * K comes from the model id (`bench-k3` → 3), else FAKE_OPENAI_K (default 3). Usage is
 * deterministic: prompt tokens = 20 × messages, completion tokens = 10. FAKE_OPENAI_LATENCY_MS
 * (default 0) delays every answer by a fixed time; a model id with `-l<ms>` (`bench-k3-l60000`)
 * sets the latency of its own requests (to keep a run waiting). GET /stats returns the request count.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const defaultK = Number(process.env.FAKE_OPENAI_K ?? '3');
const latencyMs = Number(process.env.FAKE_OPENAI_LATENCY_MS ?? '0');
const port = Number(process.env.FAKE_OPENAI_PORT ?? '0');

interface WireMessage {
  readonly role: string;
  readonly tool_calls?: unknown[];
}
interface WireRequest {
  readonly model?: string;
  readonly messages?: WireMessage[];
  readonly tools?: { function?: { name?: string } }[];
}

let requests = 0;
let sequence = 0;

function completion(request: WireRequest): unknown {
  sequence += 1;
  const messages = request.messages ?? [];
  const k = Number(/k(\d+)/.exec(request.model ?? '')?.[1] ?? defaultK);
  const rounds = messages.filter((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0).length;
  const toolName = request.tools?.[0]?.function?.name;
  const callTool = toolName !== undefined && rounds < k;
  const message = callTool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${sequence}`, type: 'function', function: { name: toolName, arguments: JSON.stringify({ n: rounds + 1 }) } }],
      }
    : { role: 'assistant', content: `Final answer after ${rounds} tool rounds.` };
  const promptTokens = 20 * messages.length;
  return {
    id: `chatcmpl-bench${sequence}`,
    object: 'chat.completion',
    created: 1_760_000_000,
    model: request.model ?? 'bench',
    choices: [{ index: 0, message, logprobs: null, finish_reason: callTool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: promptTokens, completion_tokens: 10, total_tokens: promptTokens + 10 },
  };
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.method === 'GET' && req.url === '/stats') return answer(res, 200, { requests });
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    requests += 1;
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return answer(res, 404, { error: { message: 'not found' } });
    let body: WireRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as WireRequest;
    } catch {
      return answer(res, 400, { error: { message: 'invalid JSON' } });
    }
    const reply = completion(body);
    const delay = Number(/-l(\d+)/.exec(body.model ?? '')?.[1] ?? latencyMs);
    if (delay > 0) setTimeout(() => answer(res, 200, reply), delay);
    else answer(res, 200, reply);
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : port}`);
});
// The harness owns this process: it ends when told, or when its parent goes away.
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(0));

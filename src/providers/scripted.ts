import { z } from 'zod';
import { ProviderError, type Completion, type CompletionRequest, type LlmProvider } from '../runtime/llm.ts';

/**
 * SCRIPTED: a deterministic in-process provider for demos and tests. Its replies are listed in the
 * provider's settings; reply N answers the request that already holds N assistant turns, so a run
 * replays the same way every time and concurrent runs do not interfere. A plain completion (no
 * tools offered, e.g. the final synthesis at the cap) answers `finalReply` when set.
 */
const replySchema = z.object({
  content: z.string().default(''),
  toolCalls: z
    .array(z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }))
    .default([]),
  usage: z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0) }).optional(),
});

export const scriptedSettingsSchema = z.object({
  replies: z.array(replySchema).default([]),
  finalReply: replySchema.optional(),
  /** Milliseconds to wait before answering (simulates latency; honours cancellation). */
  delayMs: z.number().int().min(0).max(60_000).default(0),
});

export type ScriptedSettings = z.input<typeof scriptedSettingsSchema>;

export function createScriptedProvider(settings: unknown): LlmProvider {
  const script = scriptedSettingsSchema.parse(settings ?? {});
  return {
    kind: 'SCRIPTED',
    async complete(request: CompletionRequest): Promise<Completion> {
      if (request.signal.aborted) throw new ProviderError('SCRIPTED', 'aborted');
      if (script.delayMs > 0) {
        await delay(script.delayMs, request.signal).catch((error: unknown) => {
          throw new ProviderError('SCRIPTED', 'aborted', null, { cause: error });
        });
      }
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      const plain = !request.tools || request.tools.length === 0;
      const reply =
        (plain ? script.finalReply : undefined) ??
        script.replies[turn] ??
        script.replies.at(-1) ?? { content: 'The scripted provider has no reply configured.', toolCalls: [], usage: undefined };
      const toolCalls = plain ? [] : reply.toolCalls.map((call, index) => ({ id: `call_${turn}_${index}`, name: call.name, arguments: call.arguments }));
      const promptChars = request.messages.reduce((sum, message) => sum + message.content.length, 0);
      return {
        content: reply.content,
        toolCalls,
        usage: reply.usage ?? { promptTokens: Math.ceil(promptChars / 4), completionTokens: Math.ceil(reply.content.length / 4) + toolCalls.length * 10 },
        finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      };
    },
  };
}

/** Waits `ms` unless `signal` aborts first; the abort listener goes with the wait (a run's signal serves many calls). */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    signal.addEventListener('abort', aborted, { once: true });
  });
}

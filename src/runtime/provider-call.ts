import { SpanKind } from '@opentelemetry/api';
import type { ToolSpec } from '../tools/tool.ts';
import { isValidUsage, ProviderError, uniqueCallIds, type Completion } from './llm.ts';
import { atBoundary, durable, stateOf, type Session } from './loop-session.ts';
import { inSpan, NO_OBSERVER, NO_SPAN_CONTENT, setDefined } from './telemetry.ts';
import { addUsage, plannedCost, priceUsage } from './usage.ts';

/**
 * One provider call: pre-flight, REQUEST step, call, usage, LLM step. null = budget denied. The
 * LLM step carries the `answered` resume point, so a run taken over after it never asks again;
 * the first REQUEST step of a pass carries the `call` point (the call may be made again).
 */
export async function callProvider(session: Session, round: number, tools: ToolSpec[] | null): Promise<Completion | null> {
  const { input } = session;
  const { settings, signal } = input;
  atBoundary(session);
  const promptText = session.messages.map((message) => message.content).join('\n');
  const denial = await input.budget.preflight(plannedCost(promptText, settings.maxTokens, input.model));
  const observer = input.observer ?? NO_OBSERVER;
  if (denial) {
    input.logger.warn({ runId: input.runId, denial }, 'budget pre-flight refused a provider call');
    observer.budgetDenied(denial);
    return null;
  }
  const callPoint = durable(session) && !session.pointed ? ({ at: 'call', round, state: stateOf(session) } as const) : undefined;
  if (callPoint) session.pointed = true;
  await input.onStep({ kind: 'REQUEST', round, messagesSent: [...session.messages], offeredTools: tools ? tools.map((spec) => spec.name) : null }, callPoint);
  if (tools) observer.toolsOffered(tools.map((spec) => spec.name));
  const started = performance.now();
  const spanContent = input.spanContent ?? NO_SPAN_CONTENT;
  const { kind: provider } = input.provider;
  /** The kind as a bounded, lower-case name (`openai`, `anthropic`, …) for spans and metrics. */
  const providerName = provider.toLowerCase();
  // GenAI semantic conventions: one CLIENT span per provider call, named `chat <model>`.
  const completion = await inSpan(
    `chat ${input.model.providerModelId}`,
    { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': providerName, 'gen_ai.request.model': input.model.providerModelId, 'airlock.round': round },
    async (span) => {
      setDefined(span, { 'gen_ai.input.messages': spanContent(session.messages) });
      try {
        const answer = await input.provider.complete({
          model: input.model.providerModelId,
          messages: [...session.messages],
          tools,
          temperature: settings.temperature,
          maxTokens: settings.maxTokens,
          signal,
        });
        // The provider boundary: numbers and ids from outside are checked before anything uses them.
        if (!isValidUsage(answer.usage)) {
          input.logger.error({ runId: input.runId, provider, usage: answer.usage }, 'provider reported invalid token counts');
          throw new ProviderError(provider, 'malformed');
        }
        const checked: Completion = { ...answer, toolCalls: uniqueCallIds(answer.toolCalls) };
        setDefined(span, {
          'gen_ai.usage.input_tokens': checked.usage.promptTokens,
          'gen_ai.usage.output_tokens': checked.usage.completionTokens,
          'gen_ai.response.finish_reasons': [checked.finishReason],
          'airlock.tool_calls': checked.toolCalls.length,
          'gen_ai.output.messages': spanContent({ content: checked.content, toolCalls: checked.toolCalls }),
        });
        return checked;
      } catch (error) {
        if (error instanceof ProviderError) span.setAttribute('error.type', error.kind);
        observer.providerCall({ provider: providerName, durationMs: performance.now() - started, outcome: 'error' });
        throw error;
      }
    },
    SpanKind.CLIENT,
  );
  const priced = priceUsage(completion.usage, input.model);
  observer.providerCall({ provider: providerName, durationMs: performance.now() - started, outcome: 'ok', usage: priced });
  session.usage = addUsage(session.usage, priced);
  await input.budget.record(priced);
  const answeredPoint = durable(session)
    ? ({ at: 'answered', round, state: stateOf(session), answer: { content: completion.content, toolCalls: completion.toolCalls } } as const)
    : undefined;
  await input.onStep(
    {
      kind: 'LLM',
      round,
      content: completion.content,
      thinking: completion.thinking ?? null,
      requestedToolCalls: completion.toolCalls,
      usage: priced,
      finishReason: completion.finishReason,
      durationMs: performance.now() - started,
    },
    answeredPoint,
  );
  session.lastContent = completion.content;
  return completion;
}

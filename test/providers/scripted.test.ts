import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/providers/scripted.ts';

describe('the SCRIPTED provider', () => {
  it('should leave no abort listener behind on the run’s signal after a delayed answer (a run makes many calls on one signal)', async () => {
    const provider = createScriptedProvider({ replies: [{ content: 'ok' }], delayMs: 1 });
    const signal = new AbortController().signal;
    for (let call = 0; call < 12; call++) {
      await provider.complete({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }], tools: null, temperature: null, maxTokens: null, signal });
    }
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('should still stop a delayed answer when the signal aborts', async () => {
    const provider = createScriptedProvider({ replies: [{ content: 'ok' }], delayMs: 60_000 });
    const controller = new AbortController();
    const answer = provider.complete({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }], tools: null, temperature: null, maxTokens: null, signal: controller.signal });
    controller.abort();
    await expect(answer).rejects.toMatchObject({ kind: 'aborted' });
  });
});

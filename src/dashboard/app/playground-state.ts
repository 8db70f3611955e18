// What the Playground remembers in this tab (session storage): the configuration, the ticked tools
// and the prompt, so a reload keeps them and the demo button can open the Playground ready to run.
const KEY = 'airlock.playground';

export interface PlaygroundState {
  readonly configurationId: string;
  /**
   * The ticks chosen in this tab for `configurationId`; null when none were chosen for it yet, and
   * then the Playground ticks every tool that configuration offers.
   */
  readonly ticks: readonly string[] | null;
  readonly prompt: string;
}

export function restorePlayground(): PlaygroundState {
  try {
    const saved = JSON.parse(sessionStorage.getItem(KEY) ?? '{}');
    return {
      configurationId: typeof saved.configurationId === 'string' ? saved.configurationId : '',
      ticks: Array.isArray(saved.ticks) ? saved.ticks.filter((tick: unknown): tick is string => typeof tick === 'string') : null,
      prompt: typeof saved.prompt === 'string' ? saved.prompt : '',
    };
  } catch {
    return { configurationId: '', ticks: null, prompt: '' };
  }
}

export function savePlayground({ configurationId, ticks, prompt }: PlaygroundState): void {
  sessionStorage.setItem(KEY, JSON.stringify({ configurationId, ticks: ticks === null ? null : [...ticks], prompt }));
}

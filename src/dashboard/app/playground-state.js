// What the Playground remembers in this tab (session storage): the configuration, the ticked tools
// and the prompt, so a reload keeps them and the demo button can open the Playground ready to run.
const KEY = 'airlock.playground';

export function restorePlayground() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(KEY) ?? '{}');
    return {
      configurationId: typeof saved.configurationId === 'string' ? saved.configurationId : '',
      ticks: Array.isArray(saved.ticks) ? saved.ticks.filter((t) => typeof t === 'string') : [],
      prompt: typeof saved.prompt === 'string' ? saved.prompt : '',
    };
  } catch {
    return { configurationId: '', ticks: [], prompt: '' };
  }
}

export function savePlayground({ configurationId, ticks, prompt }) {
  sessionStorage.setItem(KEY, JSON.stringify({ configurationId, ticks: [...ticks], prompt }));
}

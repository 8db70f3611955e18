// From an empty database to a first run without curl: an admin creates the demo configuration
// (an offline SCRIPTED model reading the sample records with describe_tables and read_records) and
// lands in the Playground on it, its offered tools ticked and a prompt typed.
import { useState } from 'preact/hooks';
import { CREATE_DEMO_CONFIGURATION, RUNNABLE_TOOLS } from './documents.ts';
import { html } from './html.js';
import { savePlayground } from './playground-state.ts';

export const DEMO_PROMPT = 'Which tables can you read, and who are our first customers?';

/** The empty state of Runs and Playground for an admin: "Create demo configuration". `onCreated(configuration)` runs once the Playground state is saved. */
export function DemoSetup({ session, onCreated }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = (await session.request(CREATE_DEMO_CONFIGURATION)).createDemoConfiguration;
      if (answer.__typename !== 'Configuration') return setError(answer.message);
      const groups = (await session.request(RUNNABLE_TOOLS, { configurationId: answer.id })).runnableTools;
      const ticks = groups.flatMap((group) => group.tools.filter((tool) => tool.offered).map((tool) => tool.name));
      savePlayground({ configurationId: answer.id, ticks, prompt: DEMO_PROMPT });
      onCreated(answer);
    } catch (failure) {
      setError(failure.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="demo-setup" id="demo-setup">
    <p><strong>No configuration exists yet.</strong> Start with the demo: an offline scripted model that looks at the sample
      records with two read-only tools (describe_tables, read_records). No API key, no network.</p>
    <button type="button" class="primary" disabled=${busy} onClick=${create}>Create demo configuration</button>
    <p role="status">${busy ? 'Creating the demo…' : ''}</p>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    <p>Or <a href="#/admin">set up your own</a> provider, model and configuration on the admin page.</p>
  </div>`;
}

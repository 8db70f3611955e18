// From an empty database to a first run without curl: an admin creates the demo configuration
// (an offline SCRIPTED model reading the sample records with describe_tables and read_records) and
// lands in the Playground on it, its offered tools ticked and a prompt typed.
import { useState } from 'preact/hooks';
import { CREATE_DEMO_CONFIGURATION } from '../documents.ts';
import { useMutation } from '../hooks/use-mutation.ts';
import { savePlayground } from '../playground-state.ts';

export const DEMO_PROMPT = 'Which tables can you read, and who are our first customers?';

/**
 * The empty state of Runs and Playground for an admin: "Create demo configuration". `onCreated`
 * runs once the Playground state is saved: the demo's id and prompt, and no ticks of its own, so
 * the Playground ticks every tool the demo offers.
 */
export function DemoSetup({ onCreated }: { onCreated: () => void }) {
  const { mutate, busy, error } = useMutation(CREATE_DEMO_CONFIGURATION);
  const [refusal, setRefusal] = useState<string | null>(null);
  const create = async () => {
    setRefusal(null);
    const answer = (await mutate({}))?.createDemoConfiguration;
    if (!answer) return;
    if (answer.__typename !== 'Configuration') return setRefusal(answer.message);
    savePlayground({ configurationId: answer.id, ticks: null, prompt: DEMO_PROMPT });
    onCreated();
  };
  const shown = refusal ?? error;
  return (
    <div class="demo-setup" id="demo-setup">
      <p>
        <strong>No configuration exists yet.</strong> Start with the demo: an offline scripted model that looks at the sample records with two read-only tools
        (describe_tables, read_records). No API key, no network.
      </p>
      <button type="button" class="primary" disabled={busy} onClick={create}>
        Create demo configuration
      </button>
      <p role="status">{busy ? 'Creating the demo…' : ''}</p>
      {shown ? (
        <p role="alert" class="error">
          {shown}
        </p>
      ) : null}
      <p>
        Or <a href="#/admin">set up your own</a> provider, model and configuration on the admin page.
      </p>
    </div>
  );
}

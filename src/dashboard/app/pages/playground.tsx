import { useEffect, useRef, useState } from 'preact/hooks';
import { DemoSetup } from '../components/demo-setup.tsx';
import { offeredTools, selectionOf, ToolPicker, type ToolGroup } from '../components/tool-picker.tsx';
import { CONFIGURATIONS, START_RUN } from '../documents.ts';
import { runHref } from '../format.ts';
import { useMutation } from '../hooks/use-mutation.ts';
import { useQuery } from '../hooks/use-query.ts';
import { useSession } from '../hooks/use-session.ts';
import { restorePlayground, savePlayground } from '../playground-state.ts';

/**
 * Try a configuration: tick tools by group, type a prompt, start, then watch in the inspector.
 * Choosing a configuration ticks every tool it offers; ticks this tab saved for the configuration
 * it restores win over that. A run with nothing ticked offers the model no tools, so starting one
 * asks for a second click first.
 */
export function PlaygroundPage() {
  const { viewer } = useSession();
  const initial = useState(restorePlayground)[0];
  const configurations = useQuery(CONFIGURATIONS);
  const [configurationId, setConfigurationId] = useState(initial.configurationId);
  // The choice as of the last event, ahead of the render: the effect that takes the first
  // configuration must not undo a choice made between the list's render and that effect.
  const chosen = useRef(initial.configurationId);
  // null = no ticks chosen for this configuration yet: its offered tools get ticked once loaded.
  const [ticks, setTicks] = useState<ReadonlySet<string> | null>(() => (initial.ticks === null ? null : new Set(initial.ticks)));
  const [groups, setGroups] = useState<readonly ToolGroup[] | null>(null);
  const [prompt, setPrompt] = useState(initial.prompt);
  const [error, setError] = useState<string | null>(null);
  const [warned, setWarned] = useState(false);
  const startRun = useMutation(START_RUN);

  useEffect(() => {
    savePlayground({ configurationId, ticks: ticks === null ? null : [...ticks], prompt });
  }, [configurationId, ticks, prompt]);

  const choose = (id: string) => {
    // Choosing the configuration already chosen keeps its ticks (a select fires change anyway).
    if (id === chosen.current) return;
    chosen.current = id;
    setConfigurationId(id);
    setTicks(null);
    setGroups(null);
    setWarned(false);
  };

  const list = configurations.data?.configurations ?? null;
  const known = list?.some((c) => c.id === configurationId) ?? false;
  // A restored configuration that no longer exists (or none yet): take the first one.
  useEffect(() => {
    if (list?.[0] && !list.some((c) => c.id === chosen.current)) choose(list[0].id);
  }, [list, known]);

  // The demo was just created from this page: take it, with the prompt it saved.
  const demoCreated = () => {
    const saved = restorePlayground();
    choose(saved.configurationId);
    setPrompt(saved.prompt);
    configurations.reload();
  };

  const toolsLoaded = (loaded: readonly ToolGroup[]) => {
    setGroups(loaded);
    setTicks((current) => current ?? new Set(offeredTools(loaded)));
  };
  const changeTicks = (next: Set<string>) => {
    setTicks(next);
    setWarned(false);
  };

  const selection = selectionOf(groups ?? [], ticks ?? new Set());
  const noTools = selection.toolGroups.length === 0 && selection.tools.length === 0;

  const launch = async (confirmed: boolean) => {
    setError(null);
    if (prompt.trim() === '') return setError('Type a prompt first.');
    if (noTools && !confirmed) return setWarned(true);
    const data = await startRun.mutate({ input: { configurationId, prompt, ...selection } });
    if (!data) return;
    if (data.startRun.__typename === 'Run') location.hash = runHref(data.startRun.id);
    else setError(data.startRun.message);
  };
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    void launch(false);
  };

  const shownError = error ?? configurations.error ?? startRun.error;
  return (
    <>
      <h1>Playground</h1>
      {list !== null && list.length === 0 ? (
        viewer.isAdmin ? (
          <DemoSetup onCreated={demoCreated} />
        ) : (
          <p class="empty">No configuration exists yet: ask an admin to create one, then come back here.</p>
        )
      ) : null}
      <form class="playground" onSubmit={submit}>
        <label for="configuration">Configuration</label>
        <select id="configuration" value={configurationId} onChange={(event) => choose(event.currentTarget.value)}>
          {(list ?? []).map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} — {c.model.name}
            </option>
          ))}
        </select>
        <fieldset class="tools">
          <legend>Tools for this run</legend>
          {known ? (
            <ToolPicker key={configurationId} configurationId={configurationId} ticks={ticks} onTicks={changeTicks} onLoaded={toolsLoaded} />
          ) : list === null ? (
            <p role="status">Loading tools…</p>
          ) : null}
        </fieldset>
        <label for="prompt">Prompt</label>
        <textarea id="prompt" rows={5} value={prompt} onInput={(event) => setPrompt(event.currentTarget.value)}></textarea>
        <button type="submit" id="start-run" disabled={startRun.busy || !known || groups === null}>
          Start run
        </button>
        {warned && noTools ? (
          <div class="no-tools-warning" id="no-tools-warning" role="alert">
            <p>This run offers the model no tools: it can only answer from the prompt. Tick the tools it may use, or start it anyway.</p>
            <button type="button" id="start-without-tools" disabled={startRun.busy} onClick={() => void launch(true)}>
              Start without tools
            </button>
          </div>
        ) : null}
        {shownError ? (
          <p role="alert" class="error">
            {shownError}
          </p>
        ) : null}
      </form>
    </>
  );
}

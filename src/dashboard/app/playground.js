import { useEffect, useRef, useState } from 'preact/hooks';
import { CONFIGURATIONS, RUNNABLE_TOOLS, START_RUN } from './documents.ts';
import { html, runHref } from './html.js';
import { DemoSetup } from './demo.js';
import { restorePlayground, savePlayground } from './playground-state.ts';

/** A group's checkbox: checked when every offered tool is ticked, "mixed" when only some of the group is. */
function GroupCheckbox({ group, ticked, onToggle }) {
  const ref = useRef(null);
  const offered = group.tools.filter((tool) => tool.offered);
  const count = offered.filter((tool) => ticked.has(tool.name)).length;
  const all = offered.length > 0 && count === offered.length;
  const mixed = (count > 0 && !all) || (all && group.offered === 'SOME');
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = mixed;
  });
  const id = `group-${group.name}`;
  return html`<span class="group-check">
    <input ref=${ref} type="checkbox" id=${id} data-group=${group.name} checked=${all && !mixed} disabled=${offered.length === 0} onChange=${() => onToggle(group, count > 0)} />
    <label for=${id}>Group <strong>${group.name}</strong> (${group.offeredCount} of ${group.tools.length} offered${group.enabled ? '' : '; switched off'})</label>
  </span>`;
}

/** Try a configuration: tick tools by group, type a prompt, start, then watch in the inspector. */
export function PlaygroundPage({ session, viewer }) {
  const initial = useState(restorePlayground)[0];
  const [configurations, setConfigurations] = useState(null);
  const [configurationId, setConfigurationId] = useState(initial.configurationId);
  const [groups, setGroups] = useState(null);
  const [ticks, setTicks] = useState(() => new Set(initial.ticks));
  const [prompt, setPrompt] = useState(initial.prompt);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    savePlayground({ configurationId, ticks, prompt });
  }, [configurationId, ticks, prompt]);

  // The demo was just created from this page: take it, with the tools and prompt it saved.
  const demoCreated = (configuration) => {
    const saved = restorePlayground();
    setConfigurations([configuration]);
    setConfigurationId(saved.configurationId);
    setTicks(new Set(saved.ticks));
    setPrompt(saved.prompt);
  };

  useEffect(() => {
    session.request(CONFIGURATIONS).then(
      (data) => {
        setConfigurations(data.configurations);
        if (!data.configurations.some((c) => c.id === configurationId) && data.configurations[0]) setConfigurationId(data.configurations[0].id);
      },
      (e) => setError(e.message),
    );
  }, [session]);

  useEffect(() => {
    if (!configurationId) return;
    setGroups(null);
    session.request(RUNNABLE_TOOLS, { configurationId }).then(
      (data) => setGroups(data.runnableTools),
      (e) => setError(e.message),
    );
  }, [session, configurationId]);

  const toggleTool = (name) =>
    setTicks((current) => {
      const next = new Set(current);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });
  const toggleGroup = (group, anyTicked) =>
    setTicks((current) => {
      const next = new Set(current);
      for (const tool of group.tools) {
        if (anyTicked || !tool.offered) next.delete(tool.name);
        else next.add(tool.name);
      }
      return next;
    });

  const start = async (event) => {
    event.preventDefault();
    setError(null);
    if (prompt.trim() === '') return setError('Type a prompt first.');
    const offered = (groups ?? []).flatMap((g) => g.tools.filter((t) => t.offered).map((t) => t.name));
    const wholeGroups = (groups ?? []).filter((g) => {
      const names = g.tools.filter((t) => t.offered).map((t) => t.name);
      return names.length > 0 && names.every((n) => ticks.has(n));
    });
    const inGroups = new Set(wholeGroups.flatMap((g) => g.tools.map((t) => t.name)));
    const input = {
      configurationId,
      prompt,
      toolGroups: wholeGroups.map((g) => g.name),
      tools: offered.filter((name) => ticks.has(name) && !inGroups.has(name)),
    };
    setBusy(true);
    try {
      const data = await session.request(START_RUN, { input });
      if (data.startRun.__typename === 'Run') location.hash = runHref(data.startRun.id);
      else setError(data.startRun.message);
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };

  return html`
    <h1>Playground</h1>
    ${configurations !== null && configurations.length === 0
      ? viewer.isAdmin
        ? html`<${DemoSetup} session=${session} onCreated=${demoCreated} />`
        : html`<p class="empty">No configuration exists yet: ask an admin to create one, then come back here.</p>`
      : null}
    <form class="playground" onSubmit=${start}>
      <label for="configuration">Configuration</label>
      <select id="configuration" value=${configurationId} onChange=${(e) => setConfigurationId(e.currentTarget.value)}>
        ${(configurations ?? []).map((c) => html`<option value=${c.id}>${c.name} — ${c.model.name}</option>`)}
      </select>
      <fieldset class="tools">
        <legend>Tools for this run</legend>
        ${groups === null
          ? html`<p role="status">Loading tools…</p>`
          : groups.length === 0
            ? html`<p>No tool is registered.</p>`
            : groups.map(
                (group) => html`<div class="group" key=${group.name}>
                  <${GroupCheckbox} group=${group} ticked=${ticks} onToggle=${toggleGroup} />
                  <ul>
                    ${group.tools.map((tool) => {
                      const id = `tool-${tool.name}`;
                      return html`<li key=${tool.name}>
                        <input type="checkbox" id=${id} data-tool=${tool.name} checked=${tool.offered && ticks.has(tool.name)} disabled=${!tool.offered}
                          aria-describedby=${tool.offered ? undefined : `${id}-reason`} onChange=${() => toggleTool(tool.name)} />
                        <label for=${id}><code>${tool.name}</code> — ${tool.description}</label>
                        ${tool.offered ? null : html`<span class="reason" id=${`${id}-reason`}>Not offered: ${tool.reason ?? tool.refusedBy ?? 'refused'}</span>`}
                      </li>`;
                    })}
                  </ul>
                </div>`,
              )}
      </fieldset>
      <label for="prompt">Prompt</label>
      <textarea id="prompt" rows="5" value=${prompt} onInput=${(e) => setPrompt(e.currentTarget.value)}></textarea>
      <button type="submit" id="start-run" disabled=${busy || !configurationId}>Start run</button>
      ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    </form>
  `;
}

import { useEffect, useState } from 'preact/hooks';
import { SET_TOOL_ENABLED, SET_TOOL_GROUP_ENABLED, TOOL_GROUPS } from './documents.ts';
import { Usage } from './components/usage.tsx';
import { formatCost, html } from './html.js';
import { RESET_TOOL, RESET_TOOL_GROUP } from './admin-documents.ts';
import { RowButton } from './forms.js';
import { ProvidersSection } from './admin-providers.js';
import { ModelsSection } from './admin-models.js';
import { ConfigurationsSection } from './admin-configurations.js';
import { UsersSection } from './admin-users.js';
import { BudgetsSection } from './admin-budgets.js';

function Switch({ id, label, checked, disabled, onChange, describedBy }) {
  return html`<span class="switch">
    <input type="checkbox" role="switch" id=${id} checked=${checked} disabled=${disabled} aria-describedby=${describedBy} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <label for=${id}>${label}</label>
  </span>`;
}

function ToolSwitches({ session, setError }) {
  const [groups, setGroups] = useState(null);
  const load = () => session.request(TOOL_GROUPS).then((d) => setGroups(d.toolGroups), (e) => setError(e.message));
  useEffect(() => void load(), [session]);
  const run = (document, variables) => session.request(document, variables).then(load, (e) => setError(e.message));
  return html`<section aria-labelledby="tools-heading">
    <h2 id="tools-heading">Tool groups and tools</h2>
    ${groups === null
      ? html`<p role="status">Loading…</p>`
      : groups.map(
          (group) => html`<div class="group" key=${group.name}>
            <h3><${Switch} id=${`switch-group-${group.name}`} label=${`Group ${group.name}`} checked=${group.enabled}
              onChange=${(enabled) => run(SET_TOOL_GROUP_ENABLED, { name: group.name, enabled })} />
              ${group.overridden ? html` <${RowButton} text="Reset" row=${`group ${group.name} to its default`} onClick=${() => run(RESET_TOOL_GROUP, { name: group.name })} />` : null}</h3>
            <ul>
              ${group.tools.map((tool) => {
                const id = `switch-tool-${tool.name}`;
                const why = !tool.groupEnabled ? `Off because its group ${group.name} is switched off.` : !tool.toolEnabled ? 'Switched off.' : tool.requiresAdmin ? 'On (admins only).' : 'On.';
                return html`<li key=${tool.name}>
                  <${Switch} id=${id} label=${tool.name} checked=${tool.toolEnabled} describedBy=${`${id}-why`}
                    onChange=${(enabled) => run(SET_TOOL_ENABLED, { name: tool.name, enabled })} />
                  <span class=${tool.enabled ? 'why' : 'why off'} id=${`${id}-why`}>${why}</span>
                  ${tool.overridden ? html`<${RowButton} text="Reset" row=${`${tool.name} to its default`} onClick=${() => run(RESET_TOOL, { name: tool.name })} />` : null}
                  <span class="description">${tool.description}</span>
                </li>`;
              })}
            </ul>
          </div>`,
        )}
  </section>`;
}

/**
 * Admin: the forms for what the API configures (providers, models, configurations, users,
 * budgets), the tool switches with their cascade, and usage by day. One form is open at a time
 * (`open`: its section and the id it edits, null for a new one); every save bumps `version`, and
 * each section reloads its list then (a new model shows in the configurations' form, and so on).
 */
export function AdminPage({ session, viewer }) {
  const [error, setError] = useState(null);
  const [open, setOpen] = useState(null);
  const [version, setVersion] = useState(0);
  const props = { session, setError: (message) => setError(message) };
  const admin = { session, viewer, open, setOpen, version, onChanged: () => setVersion((value) => value + 1) };
  return html`
    <h1>Admin</h1>
    ${error ? html`<p role="alert" class="error">${error}</p>` : null}
    <${ProvidersSection} ...${admin} />
    <${ModelsSection} ...${admin} />
    <${ConfigurationsSection} ...${admin} />
    <${UsersSection} ...${admin} />
    <${BudgetsSection} ...${admin} />
    <${ToolSwitches} ...${props} />
    <${Usage} />
  `;
}

// Providers: where models are served. Kind-specific settings; the API key and the extra headers'
// values are write-only (the API never returns them: the list and the form say "set").
import { useState } from 'preact/hooks';
import { ADMIN_PROVIDERS, CREATE_PROVIDER, DELETE_PROVIDER, UPDATE_PROVIDER } from './admin-documents.ts';
import { AdminSection, deleteWith, listOr, useAdminData } from './admin-section.js';
import { CheckboxField, DeleteButton, Form, numberField, RowButton, SelectField, submitForm, TextField, useForm } from './forms.js';
import { html, pretty } from './html.js';
import { KIND_LABELS, optionsOf } from './labels.ts';

const KIND_OPTIONS = optionsOf(KIND_LABELS);

const SCRIPT_HINT =
  'Replies in order: {"replies": [{"content": "…", "toolCalls": [{"name": "describe_tables", "arguments": {}}]}], "finalReply": {…}, "delayMs": 0}. No network, no key.';
const SAMPLE_SCRIPT = { replies: [{ content: 'Hello from the scripted provider.' }] };

function initialValues(provider) {
  return {
    name: provider?.name ?? '',
    kind: provider?.kind ?? 'OPENAI',
    baseUrl: provider?.baseUrl ?? '',
    apiKey: '',
    removeKey: false,
    timeoutMs: provider?.kind !== 'SCRIPTED' && typeof provider?.settings?.timeoutMs === 'number' ? String(provider.settings.timeoutMs) : '',
    replaceHeaders: !provider,
    headers: [],
    script: pretty(provider?.kind === 'SCRIPTED' ? provider.settings : SAMPLE_SCRIPT),
  };
}

/** The field an API issue belongs to: settings issues go to the setting's own field. */
function fieldOf(kind) {
  return (path) => {
    if (path[0] !== 'settings') return undefined;
    if (kind === 'SCRIPTED') return 'script';
    if (path[1] === 'timeoutMs' || path[1] === 'headers') return path[1];
    return undefined;
  };
}

/** The settings to send: the script for SCRIPTED; else the timeout, the headers when replaced, and any other stored setting kept. */
function settingsOf(form, provider, errors) {
  const { values } = form;
  if (values.kind === 'SCRIPTED') {
    try {
      const parsed = JSON.parse(values.script.trim() === '' ? '{}' : values.script);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) errors.script = 'must be a JSON object';
      return parsed;
    } catch {
      errors.script = 'must be JSON (an object such as {"replies": [{"content": "…"}]})';
      return null;
    }
  }
  const kept = provider && provider.kind !== 'SCRIPTED' ? { ...provider.settings } : {};
  delete kept.timeoutMs;
  const timeoutMs = numberField(form, 'timeoutMs', errors, { integer: true });
  const headers = values.replaceHeaders ? values.headers.filter((row) => row.header.trim() !== '' || row.value !== '') : [];
  return {
    ...kept,
    ...(timeoutMs === null ? {} : { timeoutMs }),
    ...(values.replaceHeaders && (provider || headers.length > 0) ? { headers: Object.fromEntries(headers.map((row) => [row.header.trim(), row.value])) } : {}),
  };
}

function inputOf(form, provider, errors) {
  const { values } = form;
  const http = values.kind !== 'SCRIPTED';
  const settings = settingsOf(form, provider, errors);
  const baseUrl = http && values.baseUrl.trim() !== '' ? values.baseUrl.trim() : null;
  const input = { name: values.name, kind: values.kind, settings };
  if (provider) {
    input.baseUrl = baseUrl;
    if (values.removeKey) input.apiKey = null;
    else if (http && values.apiKey !== '') input.apiKey = values.apiKey;
  } else {
    if (baseUrl !== null) input.baseUrl = baseUrl;
    if (http && values.apiKey !== '') input.apiKey = values.apiKey;
  }
  return input;
}

/** Extra request headers: names and values typed anew (stored values are never shown, so a change replaces them all). */
function HeaderRows({ form }) {
  const rows = form.values.headers;
  const id = `${form.id}-headers`;
  const error = form.errors.headers;
  const change = (index, key, value) => form.set('headers', rows.map((row, at) => (at === index ? { ...row, [key]: value } : row)));
  return html`<fieldset class="field" id=${id} aria-describedby=${`${id}-hint${error ? ` ${id}-error` : ''}`}>
    <legend>Extra request headers</legend>
    <p class="hint" id=${`${id}-hint`}>Sent with every call (a gateway's key, OpenRouter's HTTP-Referer). Values are write-only, like the API key; saving replaces the stored headers with these (none: removes them).</p>
    ${rows.map(
      (row, index) => html`<div class="header-row" key=${index}>
        <span><label for=${`${id}-${index}-header`}>Header ${index + 1}</label>
          <input id=${`${id}-${index}-header`} value=${row.header} aria-invalid=${error ? 'true' : undefined} onInput=${(e) => change(index, 'header', e.currentTarget.value)} /></span>
        <span><label for=${`${id}-${index}-value`}>Value ${index + 1}</label>
          <input id=${`${id}-${index}-value`} type="password" autocomplete="new-password" value=${row.value} onInput=${(e) => change(index, 'value', e.currentTarget.value)} /></span>
        <button type="button" onClick=${() => form.set('headers', rows.filter((_row, at) => at !== index))}>Remove<span class="visually-hidden"> header ${index + 1}</span></button>
      </div>`,
    )}
    <button type="button" onClick=${() => form.set('headers', [...rows, { header: '', value: '' }])}>Add header</button>
    ${error ? html`<p class="field-error" id=${`${id}-error`}>${error}</p>` : null}
  </fieldset>`;
}

function ProviderForm({ session, provider, onDone }) {
  const form = useForm(provider ? 'edit-provider' : 'new-provider', initialValues(provider));
  const http = form.values.kind !== 'SCRIPTED';
  const save = async () => {
    const errors = {};
    const input = inputOf(form, provider, errors);
    if (Object.keys(errors).length > 0) return form.setErrors(errors);
    const saved = await submitForm(form, {
      session,
      ...(provider ? { document: UPDATE_PROVIDER, variables: { id: provider.id, input }, field: 'updateProvider' } : { document: CREATE_PROVIDER, variables: { input }, field: 'createProvider' }),
      expect: 'Provider',
      fieldOf: fieldOf(form.values.kind),
    });
    if (saved) onDone(`Saved provider ${saved.name}.`);
  };
  const keyHint = provider?.hasApiKey
    ? 'set: leave empty to keep the stored key, or type a new one to replace it. Write-only: it is never shown again.'
    : 'not set. Write-only: stored encrypted and never shown again.';
  return html`<${Form} form=${form} title=${provider ? `Edit provider ${provider.name}` : 'New provider'} onSubmit=${save} onCancel=${() => onDone(null)}>
    <${TextField} form=${form} name="name" label="Name" autocomplete="off" />
    <${SelectField} form=${form} name="kind" label="Kind" options=${KIND_OPTIONS} hint="The wire it speaks: OpenAI-compatible covers OpenAI, Groq, Mistral, OpenRouter, vLLM and more." />
    ${http
      ? html`<${TextField} form=${form} name="baseUrl" label="Base URL" type="url" placeholder="the vendor's default" hint="Empty = the vendor's default address. No credentials in the URL: use the API key." />
          <${TextField} form=${form} name="apiKey" label="API key" type="password" autocomplete="new-password" placeholder=${provider?.hasApiKey ? 'set' : ''} hint=${keyHint} />
          ${provider?.hasApiKey ? html`<${CheckboxField} form=${form} name="removeKey" label="Remove the stored key" />` : null}
          <${TextField} form=${form} name="timeoutMs" label="Timeout (ms)" inputMode="numeric" hint="Per provider call, 100 to 600000; empty = the adapter's default." />
          ${provider && provider.headerNames.length > 0 ? html`<p class="hint">Stored headers: ${provider.headerNames.join(', ')} (values set, write-only).</p>` : null}
          ${provider ? html`<${CheckboxField} form=${form} name="replaceHeaders" label="Replace the extra request headers" />` : null}
          ${form.values.replaceHeaders ? html`<${HeaderRows} form=${form} />` : null}`
      : html`<${TextField} form=${form} name="script" label="Script (JSON settings)" rows="8" spellcheck=${false}
          hint=${SCRIPT_HINT} />`}
  </${Form}>`;
}

/** The providers list with New / Edit / Delete. */
export function ProvidersSection({ session, open, setOpen, version, onChanged }) {
  const { data, error, setError } = useAdminData(session, ADMIN_PROVIDERS, version);
  const [notice, setNotice] = useState(null);
  const providers = data?.providers ?? null;
  const editing = open?.section === 'provider' ? open : null;
  const done = (message) => {
    setOpen(null);
    if (message) {
      setNotice(message);
      onChanged();
    }
  };
  const remove = async (provider) => {
    setError(null);
    const refused = await deleteWith(session, DELETE_PROVIDER, { id: provider.id }, 'deleteProvider');
    if (refused) return setError(refused);
    setNotice(`Deleted provider ${provider.name}.`);
    onChanged();
  };
  const form = editing
    ? html`<${ProviderForm} key=${editing.id ?? 'new'} session=${session} provider=${editing.id ? providers?.find((p) => p.id === editing.id) ?? null : null} onDone=${done} />`
    : null;
  return html`<${AdminSection} id="providers" title="Providers" intro="Where models are served: a vendor's API (or a compatible one), a local Ollama, or the offline scripted provider."
      newLabel="New provider" onNew=${() => setOpen({ section: 'provider', id: null })} form=${form} notice=${notice} error=${error}>
    ${listOr(providers, 'No provider yet.', () => html`<table id="providers-table"><caption class="visually-hidden">Providers</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Base URL</th><th scope="col">API key</th><th scope="col">Extra headers</th><th scope="col">Models</th><th scope="col">Actions</th></tr></thead>
      <tbody>${providers.map(
        (p) => html`<tr key=${p.id} data-provider=${p.name}>
          <td>${p.name}</td><td>${KIND_LABELS[p.kind] ?? p.kind}</td>
          <td>${p.kind === 'SCRIPTED' ? '—' : p.baseUrl ?? "vendor's default"}</td>
          <td class="api-key">${p.kind === 'SCRIPTED' ? '—' : p.hasApiKey ? 'set' : 'not set'}</td>
          <td>${p.headerNames.length ? `${p.headerNames.join(', ')} (set)` : '—'}</td>
          <td>${p.models.length}</td>
          <td class="actions"><${RowButton} text="Edit" row=${`provider ${p.name}`} onClick=${() => setOpen({ section: 'provider', id: p.id })} />
            <${DeleteButton} label=${`provider ${p.name}`} onDelete=${() => remove(p)} /></td>
        </tr>`,
      )}</tbody></table>`)}
  </${AdminSection}>`;
}

// Providers: where models are served. Kind-specific settings; the API key and the extra headers'
// values are write-only (the API never returns them: the list and the form say "set").
import { ADMIN_PROVIDERS, CREATE_PROVIDER, DELETE_PROVIDER, UPDATE_PROVIDER } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { CheckboxField, Form, numberField, SelectField, submitForm, TextField, useForm, type FieldOf, type FormErrors, type FormState } from '../../components/forms.tsx';
import { DeleteButton, RowButton } from '../../components/row-actions.tsx';
import { HeaderRows, headersOf, type HeaderRow } from '../../components/header-rows.tsx';
import { pretty } from '../../format.ts';
import type { ConsoleAdminProvidersQuery, CreateProviderInput, ProviderKind, UpdateProviderInput } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';
import { KIND_LABELS, optionsOf } from '../../labels.ts';

type Provider = ConsoleAdminProvidersQuery['providers'][number];

const KIND_OPTIONS = optionsOf(KIND_LABELS);

const SCRIPT_HINT =
  'Replies in order: {"replies": [{"content": "…", "toolCalls": [{"name": "describe_tables", "arguments": {}}]}], "finalReply": {…}, "delayMs": 0}. No network, no key.';
const SAMPLE_SCRIPT = { replies: [{ content: 'Hello from the scripted provider.' }] };

interface Values {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey: string;
  removeKey: boolean;
  timeoutMs: string;
  replaceHeaders: boolean;
  headers: readonly HeaderRow[];
  script: string;
}

/** The stored settings as an object (JSON from the API: anything until looked at). */
function settingsObject(provider: Provider | null): Record<string, unknown> {
  const settings = provider?.settings;
  return settings !== null && typeof settings === 'object' && !Array.isArray(settings) ? { ...(settings as Record<string, unknown>) } : {};
}

function initialValues(provider: Provider | null): Values {
  const timeoutMs = settingsObject(provider).timeoutMs;
  return {
    name: provider?.name ?? '',
    kind: provider?.kind ?? 'OPENAI',
    baseUrl: provider?.baseUrl ?? '',
    apiKey: '',
    removeKey: false,
    timeoutMs: provider?.kind !== 'SCRIPTED' && typeof timeoutMs === 'number' ? String(timeoutMs) : '',
    replaceHeaders: !provider,
    headers: [],
    script: pretty(provider?.kind === 'SCRIPTED' ? provider.settings : SAMPLE_SCRIPT),
  };
}

/** The field an API issue belongs to: settings issues go to the setting's own field. */
function fieldOf(kind: ProviderKind): FieldOf {
  return (path) => {
    if (path[0] !== 'settings') return undefined;
    if (kind === 'SCRIPTED') return 'script';
    if (path[1] === 'timeoutMs' || path[1] === 'headers') return path[1];
    return undefined;
  };
}

/** The settings to send: the script for SCRIPTED; else the timeout, the headers when replaced, and any other stored setting kept. */
function settingsOf(form: FormState<Values>, provider: Provider | null, errors: FormErrors<Values>): unknown {
  const { values } = form;
  if (values.kind === 'SCRIPTED') {
    try {
      const parsed: unknown = JSON.parse(values.script.trim() === '' ? '{}' : values.script);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) errors.script = 'must be a JSON object';
      return parsed;
    } catch {
      errors.script = 'must be JSON (an object such as {"replies": [{"content": "…"}]})';
      return null;
    }
  }
  const kept = provider && provider.kind !== 'SCRIPTED' ? settingsObject(provider) : {};
  delete kept.timeoutMs;
  const timeoutMs = numberField(form, 'timeoutMs', errors, { integer: true });
  const headers = values.replaceHeaders ? headersOf(values.headers) : {};
  return {
    ...kept,
    ...(timeoutMs === null ? {} : { timeoutMs }),
    ...(values.replaceHeaders && (provider || Object.keys(headers).length > 0) ? { headers } : {}),
  };
}

function inputOf(form: FormState<Values>, provider: Provider | null, errors: FormErrors<Values>): CreateProviderInput & UpdateProviderInput {
  const { values } = form;
  const http = values.kind !== 'SCRIPTED';
  const settings = settingsOf(form, provider, errors);
  const baseUrl = http && values.baseUrl.trim() !== '' ? values.baseUrl.trim() : null;
  const input: CreateProviderInput & UpdateProviderInput = { name: values.name, kind: values.kind, settings };
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

function ProviderForm({ provider, onDone }: { provider: Provider | null; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const form = useForm(provider ? 'edit-provider' : 'new-provider', initialValues(provider));
  const http = form.values.kind !== 'SCRIPTED';
  const save = async () => {
    const errors: FormErrors<Values> = {};
    const input = inputOf(form, provider, errors);
    if (Object.keys(errors).length > 0) return form.setErrors(errors);
    const options = { session, expect: 'Provider' as const, fieldOf: fieldOf(form.values.kind) };
    const saved = provider
      ? await submitForm(form, { ...options, document: UPDATE_PROVIDER, variables: { id: provider.id, input }, field: 'updateProvider' })
      : await submitForm(form, { ...options, document: CREATE_PROVIDER, variables: { input }, field: 'createProvider' });
    if (saved) onDone(`Saved provider ${saved.name}.`);
  };
  const keyHint = provider?.hasApiKey
    ? 'set: leave empty to keep the stored key, or type a new one to replace it. Write-only: it is never shown again.'
    : 'not set. Write-only: stored encrypted and never shown again.';
  return (
    <Form form={form} title={provider ? `Edit provider ${provider.name}` : 'New provider'} onSubmit={save} onCancel={() => onDone(null)}>
      <TextField form={form} name="name" label="Name" autocomplete="off" />
      <SelectField form={form} name="kind" label="Kind" options={KIND_OPTIONS} hint="The wire it speaks: OpenAI-compatible covers OpenAI, Groq, Mistral, OpenRouter, vLLM and more." />
      {http ? (
        <>
          <TextField form={form} name="baseUrl" label="Base URL" type="url" placeholder="the vendor's default" hint="Empty = the vendor's default address. No credentials in the URL: use the API key." />
          <TextField form={form} name="apiKey" label="API key" type="password" autocomplete="new-password" placeholder={provider?.hasApiKey ? 'set' : ''} hint={keyHint} />
          {provider?.hasApiKey ? <CheckboxField form={form} name="removeKey" label="Remove the stored key" /> : null}
          <TextField form={form} name="timeoutMs" label="Timeout (ms)" inputMode="numeric" hint="Per provider call, 100 to 600000; empty = the adapter's default." />
          {provider && provider.headerNames.length > 0 ? <p class="hint">Stored headers: {provider.headerNames.join(', ')} (values set, write-only).</p> : null}
          {provider ? <CheckboxField form={form} name="replaceHeaders" label="Replace the extra request headers" /> : null}
          {form.values.replaceHeaders ? (
            <HeaderRows
              form={form}
              legend="Extra request headers"
              hint="Sent with every call (a gateway's key, OpenRouter's HTTP-Referer). Values are write-only, like the API key; saving replaces the stored headers with these (none: removes them)."
            />
          ) : null}
        </>
      ) : (
        <TextField form={form} name="script" label="Script (JSON settings)" rows={8} spellcheck={false} hint={SCRIPT_HINT} />
      )}
    </Form>
  );
}

/** The providers list with New / Edit / Delete. */
export function ProvidersSection(props: AdminProps) {
  const { data, error, setError } = useAdminData(ADMIN_PROVIDERS, props.version);
  const { notice, editing, done, remove, openForm } = useSectionState('provider', props, setError);
  const providers = data?.providers ?? null;
  const form = editing ? <ProviderForm key={editing.id ?? 'new'} provider={editing.id ? (providers?.find((p) => p.id === editing.id) ?? null) : null} onDone={done} /> : null;
  return (
    <AdminSection
      id="providers"
      title="Providers"
      intro="Where models are served: a vendor's API (or a compatible one), a local Ollama, or the offline scripted provider."
      newLabel="New provider"
      onNew={() => openForm(null)}
      form={form}
      notice={notice}
      error={error}
    >
      {listOr(providers, 'No provider yet.', (rows) => (
        <table id="providers-table">
          <caption class="visually-hidden">Providers</caption>
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Base URL</th><th scope="col">API key</th><th scope="col">Extra headers</th><th scope="col">Models</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id} data-provider={p.name}>
                <td>{p.name}</td>
                <td>{KIND_LABELS[p.kind] ?? p.kind}</td>
                <td>{p.kind === 'SCRIPTED' ? '—' : (p.baseUrl ?? "vendor's default")}</td>
                <td class="api-key">{p.kind === 'SCRIPTED' ? '—' : p.hasApiKey ? 'set' : 'not set'}</td>
                <td>{p.headerNames.length ? `${p.headerNames.join(', ')} (set)` : '—'}</td>
                <td>{p.models.length}</td>
                <td class="actions">
                  <RowButton text="Edit" row={`provider ${p.name}`} onClick={() => openForm(p.id)} />{' '}
                  <DeleteButton label={`provider ${p.name}`} onDelete={() => remove(DELETE_PROVIDER, { id: p.id }, 'deleteProvider', `Deleted provider ${p.name}.`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}

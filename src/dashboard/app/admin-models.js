// Models: a provider's model under a name of ours, with its prices (per million tokens), which
// price every call's usage.
import { useEffect, useState } from 'preact/hooks';
import { ADMIN_MODELS, ADMIN_PROVIDERS, CREATE_MODEL, DELETE_MODEL, UPDATE_MODEL } from './admin-documents.ts';
import { AdminSection, deleteWith, listOr, useAdminData } from './admin-section.js';
import { DeleteButton, Form, numberField, RowButton, SelectField, submitForm, TextField, useForm } from './forms.js';
import { html } from './html.js';

const price = (value) => (typeof value === 'number' ? `$${value}` : '—');
const text = (value) => (value === null || value === undefined ? '' : String(value));

function ModelForm({ session, model, onDone }) {
  const { data } = useAdminData(session, ADMIN_PROVIDERS, 0);
  const providers = data?.providers ?? [];
  const form = useForm(model ? 'edit-model' : 'new-model', {
    providerId: model?.provider?.id ?? '',
    name: model?.name ?? '',
    providerModelId: model?.providerModelId ?? '',
    inputPricePerMTok: text(model?.inputPricePerMTok),
    outputPricePerMTok: text(model?.outputPricePerMTok),
    maxTokens: text(model?.maxTokens),
  });
  useEffect(() => {
    if (form.values.providerId === '' && providers[0]) form.set('providerId', providers[0].id);
  }, [data]);
  const save = async () => {
    const errors = {};
    const providerId = form.values.providerId;
    if (providerId === '') errors.providerId = 'create a provider first';
    const input = {
      providerId,
      name: form.values.name,
      providerModelId: form.values.providerModelId,
      inputPricePerMTok: numberField(form, 'inputPricePerMTok', errors, { empty: 0 }),
      outputPricePerMTok: numberField(form, 'outputPricePerMTok', errors, { empty: 0 }),
      maxTokens: numberField(form, 'maxTokens', errors, { integer: true }),
    };
    if (Object.keys(errors).length > 0) return form.setErrors(errors);
    const saved = await submitForm(form, {
      session,
      ...(model ? { document: UPDATE_MODEL, variables: { id: model.id, input }, field: 'updateModel' } : { document: CREATE_MODEL, variables: { input }, field: 'createModel' }),
      expect: 'Model',
    });
    if (saved) onDone(`Saved model ${saved.name}.`);
  };
  const options = providers.map((provider) => [provider.id, `${provider.name} (${provider.kind})`]);
  return html`<${Form} form=${form} title=${model ? `Edit model ${model.name}` : 'New model'} onSubmit=${save} onCancel=${() => onDone(null)}>
    <${SelectField} form=${form} name="providerId" label="Provider" options=${data === null ? [['', 'Loading…']] : options.length ? options : [['', 'No provider yet: create one above']]}
      onChange=${() => form.setErrors({})} />
    <${TextField} form=${form} name="name" label="Name" autocomplete="off" hint="How configurations and the usage reports name it." />
    <${TextField} form=${form} name="providerModelId" label="Model id" autocomplete="off" hint="The id the vendor expects, e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1." />
    <${TextField} form=${form} name="inputPricePerMTok" label="Input price per million tokens" inputMode="decimal" hint="In your currency; empty = 0 (free)." />
    <${TextField} form=${form} name="outputPricePerMTok" label="Output price per million tokens" inputMode="decimal" hint="Empty = 0 (free)." />
    <${TextField} form=${form} name="maxTokens" label="Max tokens" inputMode="numeric" hint="Cap on each answer's tokens; empty = none." />
  </${Form}>`;
}

/** The models list with New / Edit / Delete. */
export function ModelsSection({ session, open, setOpen, version, onChanged }) {
  const { data, error, setError } = useAdminData(session, ADMIN_MODELS, version);
  const [notice, setNotice] = useState(null);
  const models = data?.models ?? null;
  const editing = open?.section === 'model' ? open : null;
  const done = (message) => {
    setOpen(null);
    if (message) {
      setNotice(message);
      onChanged();
    }
  };
  const remove = async (model) => {
    setError(null);
    const refused = await deleteWith(session, DELETE_MODEL, { id: model.id }, 'deleteModel');
    if (refused) return setError(refused);
    setNotice(`Deleted model ${model.name}.`);
    onChanged();
  };
  const form = editing
    ? html`<${ModelForm} key=${editing.id ?? 'new'} session=${session} model=${editing.id ? models?.find((m) => m.id === editing.id) ?? null : null} onDone=${done} />`
    : null;
  return html`<${AdminSection} id="models" title="Models" intro="A provider's model under a name of yours, with the prices that cost every call."
      newLabel="New model" onNew=${() => setOpen({ section: 'model', id: null })} form=${form} notice=${notice} error=${error}>
    ${listOr(models, 'No model yet: create a provider, then a model of it.', () => html`<table id="models-table"><caption class="visually-hidden">Models</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Provider</th><th scope="col">Vendor's id</th><th scope="col">Input / 1M tokens</th><th scope="col">Output / 1M tokens</th><th scope="col">Max tokens</th><th scope="col">Actions</th></tr></thead>
      <tbody>${models.map(
        (m) => html`<tr key=${m.id} data-model=${m.name}>
          <td>${m.name}</td><td>${m.provider?.name ?? '—'}</td><td>${m.providerModelId}</td>
          <td>${price(m.inputPricePerMTok)}</td><td>${price(m.outputPricePerMTok)}</td><td>${m.maxTokens ?? '—'}</td>
          <td class="actions"><${RowButton} text="Edit" row=${`model ${m.name}`} onClick=${() => setOpen({ section: 'model', id: m.id })} />
            <${DeleteButton} label=${`model ${m.name}`} onDelete=${() => remove(m)} /></td>
        </tr>`,
      )}</tbody></table>`)}
  </${AdminSection}>`;
}

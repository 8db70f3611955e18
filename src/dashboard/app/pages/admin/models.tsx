// Models: a provider's model under a name of ours, with its prices (per million tokens), which
// price every call's usage.
import { useEffect } from 'preact/hooks';
import { ADMIN_MODELS, ADMIN_PROVIDERS, CREATE_MODEL, DELETE_MODEL, UPDATE_MODEL } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { Form, numberField, SelectField, submitForm, TextField, useForm, type FormErrors } from '../../components/forms.tsx';
import { DeleteButton, RowButton } from '../../components/row-actions.tsx';
import type { ConsoleAdminModelsQuery } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';

type Model = ConsoleAdminModelsQuery['models'][number];

const price = (value: number | null | undefined) => (typeof value === 'number' ? `$${value}` : '—');
/** A stored number as the text of its field ('' when not set). */
const text = (value: number | null | undefined) => (value === null || value === undefined ? '' : String(value));

function ModelForm({ model, onDone }: { model: Model | null; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const { data } = useAdminData(ADMIN_PROVIDERS, 0);
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
    const errors: FormErrors<typeof form.values> = {};
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
    const saved = model
      ? await submitForm(form, { session, document: UPDATE_MODEL, variables: { id: model.id, input }, field: 'updateModel', expect: 'Model' })
      : await submitForm(form, { session, document: CREATE_MODEL, variables: { input }, field: 'createModel', expect: 'Model' });
    if (saved) onDone(`Saved model ${saved.name}.`);
  };
  const options: [string, string][] = providers.map((provider) => [provider.id, `${provider.name} (${provider.kind})`]);
  return (
    <Form form={form} title={model ? `Edit model ${model.name}` : 'New model'} onSubmit={save} onCancel={() => onDone(null)}>
      <SelectField
        form={form}
        name="providerId"
        label="Provider"
        options={data === null ? [['', 'Loading…']] : options.length ? options : [['', 'No provider yet: create one above']]}
        onChange={() => form.setErrors({})}
      />
      <TextField form={form} name="name" label="Name" autocomplete="off" hint="How configurations and the usage reports name it." />
      <TextField form={form} name="providerModelId" label="Model id" autocomplete="off" hint="The id the vendor expects, e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1." />
      <TextField form={form} name="inputPricePerMTok" label="Input price per million tokens" inputMode="decimal" hint="In your currency; empty = 0 (free)." />
      <TextField form={form} name="outputPricePerMTok" label="Output price per million tokens" inputMode="decimal" hint="Empty = 0 (free)." />
      <TextField form={form} name="maxTokens" label="Max tokens" inputMode="numeric" hint="Cap on each answer's tokens; empty = none." />
    </Form>
  );
}

/** The models list with New / Edit / Delete. */
export function ModelsSection(props: AdminProps) {
  const { data, error, setError } = useAdminData(ADMIN_MODELS, props.version);
  const { notice, editing, done, remove, openForm } = useSectionState('model', props, setError);
  const models = data?.models ?? null;
  const form = editing ? <ModelForm key={editing.id ?? 'new'} model={editing.id ? (models?.find((m) => m.id === editing.id) ?? null) : null} onDone={done} /> : null;
  return (
    <AdminSection id="models" title="Models" intro="A provider's model under a name of yours, with the prices that cost every call." newLabel="New model" onNew={() => openForm(null)} form={form} notice={notice} error={error}>
      {listOr(models, 'No model yet: create a provider, then a model of it.', (rows) => (
        <table id="models-table">
          <caption class="visually-hidden">Models</caption>
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Provider</th><th scope="col">Vendor's id</th><th scope="col">Input / 1M tokens</th><th scope="col">Output / 1M tokens</th><th scope="col">Max tokens</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.id} data-model={m.name}>
                <td>{m.name}</td>
                <td>{m.provider?.name ?? '—'}</td>
                <td>{m.providerModelId}</td>
                <td>{price(m.inputPricePerMTok)}</td>
                <td>{price(m.outputPricePerMTok)}</td>
                <td>{m.maxTokens ?? '—'}</td>
                <td class="actions">
                  <RowButton text="Edit" row={`model ${m.name}`} onClick={() => openForm(m.id)} />{' '}
                  <DeleteButton label={`model ${m.name}`} onDelete={() => remove(DELETE_MODEL, { id: m.id }, 'deleteModel', `Deleted model ${m.name}.`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}

// Configurations: what a run is (model, system prompt, tool groups, limits, privacy of the stored
// copy, approvals). Any user may run one; only admins create, change or delete them.
import { useEffect } from 'preact/hooks';
import { ADMIN_CONFIGURATIONS, ADMIN_MODELS, CREATE_CONFIGURATION, DELETE_CONFIGURATION, UPDATE_CONFIGURATION } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { CheckboxField, CheckboxListField, Form, numberField, SelectField, submitForm, TextField, useForm, type FormErrors, type FormState } from '../../components/forms.tsx';
import { DeleteButton, RowButton } from '../../components/row-actions.tsx';
import { TOOL_GROUPS } from '../../documents.ts';
import type { ConsoleAdminConfigurationsQuery, CreateConfigurationInput, PrivacyLevel, TruncationMode } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';
import { optionsOf, PRIVACY_LABELS, TRUNCATION_LABELS } from '../../labels.ts';

type Configuration = ConsoleAdminConfigurationsQuery['configurations'][number];
type Skill = ConsoleAdminConfigurationsQuery['skills'][number];

const PRIVACY_OPTIONS = optionsOf(PRIVACY_LABELS);
const TRUNCATION_OPTIONS = optionsOf(TRUNCATION_LABELS);

const text = (value: number | null | undefined) => (value === null || value === undefined ? '' : String(value));

function initialValues(configuration: Configuration | null) {
  return {
    name: configuration?.name ?? '',
    modelId: configuration?.model.id ?? '',
    systemPrompt: configuration?.systemPrompt ?? '',
    temperature: text(configuration?.temperature),
    maxTokens: text(configuration?.maxTokens),
    maxIterations: text(configuration?.maxIterations),
    privacyLevel: configuration?.privacyLevel ?? ('METADATA' as PrivacyLevel),
    allowedToolGroups: configuration?.allowedToolGroups ?? [],
    skillIds: configuration?.skills.map((skill) => skill.id) ?? [],
    truncation: configuration?.truncation ?? ('HEAD' as TruncationMode),
    requireSecondApprover: configuration?.requireSecondApprover ?? false,
    maxRemoteToolCalls: text(configuration?.maxRemoteToolCalls),
    quarantineToolOutput: configuration?.quarantineToolOutput ?? false,
    trustFloor: text(configuration?.trustFloor),
  };
}

type Values = ReturnType<typeof initialValues>;

function inputOf(form: FormState<Values>, errors: FormErrors<Values>): CreateConfigurationInput {
  const { values } = form;
  if (values.modelId === '') errors.modelId = 'create a model first';
  return {
    name: values.name,
    modelId: values.modelId,
    systemPrompt: values.systemPrompt,
    temperature: numberField(form, 'temperature', errors),
    maxTokens: numberField(form, 'maxTokens', errors, { integer: true }),
    maxIterations: numberField(form, 'maxIterations', errors, { integer: true }),
    privacyLevel: values.privacyLevel,
    allowedToolGroups: values.allowedToolGroups,
    skillIds: values.skillIds,
    truncation: values.truncation,
    requireSecondApprover: values.requireSecondApprover,
    maxRemoteToolCalls: numberField(form, 'maxRemoteToolCalls', errors, { integer: true }),
    quarantineToolOutput: values.quarantineToolOutput,
    trustFloor: numberField(form, 'trustFloor', errors, { integer: true }),
  };
}

function ConfigurationForm({ configuration, skills, onDone }: { configuration: Configuration | null; skills: readonly Skill[]; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const models = useAdminData(ADMIN_MODELS, 0).data?.models ?? null;
  const groups = useAdminData(TOOL_GROUPS, 0).data?.toolGroups ?? [];
  const form = useForm(configuration ? 'edit-configuration' : 'new-configuration', initialValues(configuration));
  useEffect(() => {
    if (form.values.modelId === '' && models?.[0]) form.set('modelId', models[0].id);
  }, [models]);
  const save = async () => {
    const errors: FormErrors<Values> = {};
    const input = inputOf(form, errors);
    if (Object.keys(errors).length > 0) return form.setErrors(errors);
    const saved = configuration
      ? await submitForm(form, { session, document: UPDATE_CONFIGURATION, variables: { id: configuration.id, input }, field: 'updateConfiguration', expect: 'Configuration' })
      : await submitForm(form, { session, document: CREATE_CONFIGURATION, variables: { input }, field: 'createConfiguration', expect: 'Configuration' });
    if (saved) onDone(`Saved configuration ${saved.name}.`);
  };
  // Groups named by the configuration but not registered now stay listed, so saving keeps them.
  const groupNames = [...new Set([...groups.map((group) => group.name), ...form.values.allowedToolGroups])];
  const modelOptions: [string, string][] =
    models === null ? [['', 'Loading…']] : models.length ? models.map((m) => [m.id, `${m.name} (${m.provider?.name ?? '?'})`]) : [['', 'No model yet: create one above']];
  return (
    <Form form={form} title={configuration ? `Edit configuration ${configuration.name}` : 'New configuration'} onSubmit={save} onCancel={() => onDone(null)}>
      <TextField form={form} name="name" label="Name" autocomplete="off" />
      <SelectField form={form} name="modelId" label="Model" options={modelOptions} />
      <TextField form={form} name="systemPrompt" label="System prompt" rows={4} />
      <SelectField
        form={form}
        name="privacyLevel"
        label="Privacy level"
        options={PRIVACY_OPTIONS}
        hint="What of each run is stored (and shown to non-admins live). At NONE and METADATA even an admin reads no prompt, answer or tool output back."
      />
      <CheckboxListField
        form={form}
        name="allowedToolGroups"
        legend="Allowed tool groups"
        options={groupNames.map((name) => [name, name] as const)}
        hint="None ticked = every enabled tool the running user may use (for an admin that includes the system and accounts tools)."
      />
      {skills.length > 0 ? <CheckboxListField form={form} name="skillIds" legend="Skills" options={skills.map((skill) => [skill.id, skill.name] as const)} /> : null}
      <TextField form={form} name="maxIterations" label="Iteration cap" inputMode="numeric" hint="Tool rounds before a final answer is forced, 1 to 50; empty = the default (5)." />
      <TextField form={form} name="temperature" label="Temperature" inputMode="decimal" hint="0 to 2; empty = the provider's default." />
      <TextField form={form} name="maxTokens" label="Max tokens" inputMode="numeric" hint="Per answer; empty = no cap." />
      <SelectField form={form} name="truncation" label="Truncation mode" options={TRUNCATION_OPTIONS} hint="How a tool output over 50 000 bytes is cut before the model sees it." />
      <CheckboxField form={form} name="requireSecondApprover" label="Second approver" hint="Four eyes: whoever started a run may deny, but not approve, its writes." />
      <TextField form={form} name="maxRemoteToolCalls" label="Remote tool call budget" inputMode="numeric" hint="Calls of MCP-imported tools one run may make, 0 to 1000; empty = the default (20)." />
      <CheckboxField form={form} name="quarantineToolOutput" label="Quarantine tool output" hint="Wraps every tool output in a quarantine envelope for the model." />
      <TextField form={form} name="trustFloor" label="Trust floor" inputMode="numeric" hint="Skills below this trust level are left out, 0 to 100; empty = 0." />
    </Form>
  );
}

/** The configurations list with New / Edit / Delete. */
export function ConfigurationsSection(props: AdminProps) {
  const { data, error, setError } = useAdminData(ADMIN_CONFIGURATIONS, props.version);
  const { notice, editing, done, remove, openForm } = useSectionState('configuration', props, setError);
  const configurations = data?.configurations ?? null;
  const form = editing ? (
    <ConfigurationForm key={editing.id ?? 'new'} skills={data?.skills ?? []} configuration={editing.id ? (configurations?.find((c) => c.id === editing.id) ?? null) : null} onDone={done} />
  ) : null;
  return (
    <AdminSection
      id="configurations"
      title="Configurations"
      intro="What a run is: a model, its instructions, the tools it may offer, its limits and what is kept of it."
      newLabel="New configuration"
      onNew={() => openForm(null)}
      form={form}
      notice={notice}
      error={error}
    >
      {listOr(configurations, 'No configuration yet: create a provider, a model, then a configuration (or the demo one from Runs or Playground).', (rows) => (
        <table id="configurations-table">
          <caption class="visually-hidden">Configurations</caption>
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Model</th><th scope="col">Privacy</th><th scope="col">Tool groups</th><th scope="col">Iteration cap</th><th scope="col">Second approver</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.id} data-configuration={c.name}>
                <td>{c.name}</td>
                <td>{c.model.name}</td>
                <td>{c.privacyLevel}</td>
                <td>{c.allowedToolGroups.length ? c.allowedToolGroups.join(', ') : 'any'}</td>
                <td>{c.maxIterations}</td>
                <td>{c.requireSecondApprover ? 'yes' : 'no'}</td>
                <td class="actions">
                  <RowButton text="Edit" row={`configuration ${c.name}`} onClick={() => openForm(c.id)} />{' '}
                  <DeleteButton label={`configuration ${c.name}`} onDelete={() => remove(DELETE_CONFIGURATION, { id: c.id }, 'deleteConfiguration', `Deleted configuration ${c.name}.`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}

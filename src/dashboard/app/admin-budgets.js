// Budgets: spending limits of a user or a configuration per UTC day or month (0 = unlimited),
// beside what the current period has spent. `setBudget` creates or replaces one; the API has no
// delete, so "no limit" is all three limits at 0.
import { useEffect, useState } from 'preact/hooks';
import { ADMIN_BUDGETS, SET_BUDGET } from './admin-documents.ts';
import { AdminSection, listOr, useAdminData } from './admin-section.js';
import { Form, numberField, RowButton, SelectField, submitForm, TextField, useForm } from './forms.js';
import { formatCost, html } from './html.js';
import { optionsOf, PERIOD_LABELS } from './labels.ts';

const PERIOD_OPTIONS = optionsOf(PERIOD_LABELS);

function subjectOptions(data) {
  return [
    ...data.users.map((user) => [user.id, `User ${user.name}`]),
    ...data.configurations.map((configuration) => [configuration.id, `Configuration ${configuration.name}`]),
  ];
}

function BudgetForm({ session, data, budget, onDone }) {
  const options = subjectOptions(data);
  const form = useForm(budget ? 'edit-budget' : 'new-budget', {
    subjectId: budget?.subjectId ?? options[0]?.[0] ?? '',
    period: budget?.period ?? PERIOD_OPTIONS[0][0],
    maxRequests: String(budget?.maxRequests ?? 0),
    maxTokens: String(budget?.maxTokens ?? 0),
    maxCost: String(budget?.maxCost ?? 0),
  });
  useEffect(() => {
    if (form.values.subjectId === '' && options[0]) form.set('subjectId', options[0][0]);
  }, [data]);
  const save = async () => {
    const errors = {};
    const input = {
      subjectId: form.values.subjectId,
      period: form.values.period,
      maxRequests: numberField(form, 'maxRequests', errors, { integer: true, empty: 0 }),
      maxTokens: numberField(form, 'maxTokens', errors, { integer: true, empty: 0 }),
      maxCost: numberField(form, 'maxCost', errors, { empty: 0 }),
    };
    if (Object.keys(errors).length > 0) return form.setErrors(errors);
    const saved = await submitForm(form, { session, document: SET_BUDGET, variables: { input }, field: 'setBudget', expect: 'Budget' });
    if (saved) onDone('Saved the budget.');
  };
  const subject = options.find(([id]) => id === form.values.subjectId)?.[1] ?? '';
  return html`<${Form} form=${form} title=${budget ? `Edit budget of ${subject}` : 'New budget'} onSubmit=${save} onCancel=${() => onDone(null)}>
    ${budget ? null : html`<${SelectField} form=${form} name="subjectId" label="Limits whom" options=${options} />
      <${SelectField} form=${form} name="period" label="Period" options=${PERIOD_OPTIONS} hint="A budget of the same subject and period is replaced." />`}
    <${TextField} form=${form} name="maxRequests" label="Max requests" inputMode="numeric" hint="Provider calls per period; 0 = unlimited." />
    <${TextField} form=${form} name="maxTokens" label="Max tokens" inputMode="numeric" hint="Prompt and completion tokens per period; 0 = unlimited." />
    <${TextField} form=${form} name="maxCost" label="Max cost" inputMode="decimal" hint="In the currency of the model prices; 0 = unlimited." />
  </${Form}>`;
}

/** The budgets with what each has spent this period; New budget, Edit. */
export function BudgetsSection({ session, open, setOpen, version, onChanged }) {
  const { data, error } = useAdminData(session, ADMIN_BUDGETS, version);
  const [notice, setNotice] = useState(null);
  const budgets = data?.budgets ?? null;
  const keyOf = (budget) => `${budget.subjectId}:${budget.period}`;
  const editing = open?.section === 'budget' ? open : null;
  const done = (message) => {
    setOpen(null);
    if (message) {
      setNotice(message);
      onChanged();
    }
  };
  const names = new Map(data ? subjectOptions(data) : []);
  const form = editing && data
    ? html`<${BudgetForm} key=${editing.id ?? 'new'} session=${session} data=${data} budget=${editing.id ? budgets.find((b) => keyOf(b) === editing.id) ?? null : null} onDone=${done} />`
    : null;
  return html`<${AdminSection} id="budgets" title="Budgets" intro="Limits per user or configuration and UTC day or month, checked before every provider call; 0 = unlimited."
      newLabel="New budget" onNew=${() => setOpen({ section: 'budget', id: null })} form=${form} notice=${notice} error=${error}>
    ${listOr(budgets, 'No budget: nothing is limited.', () => html`<table id="budgets-table"><caption class="visually-hidden">Budgets</caption>
      <thead><tr><th scope="col">Limits</th><th scope="col">Period</th><th scope="col">Requests</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Actions</th></tr></thead>
      <tbody>${budgets.map((b) => {
        const subject = names.get(b.subjectId) ?? b.subjectId;
        const of = (spent, max, format = String) => `${format(spent)} of ${max === 0 ? 'unlimited' : format(max)}`;
        return html`<tr key=${keyOf(b)}>
          <td>${subject}</td><td>${b.period === 'DAILY' ? 'day' : 'month'}</td>
          <td>${of(b.spent.requests, b.maxRequests)}</td><td>${of(b.spent.tokens, b.maxTokens)}</td><td>${of(b.spent.cost, b.maxCost, formatCost)}</td>
          <td class="actions"><${RowButton} text="Edit" row=${`budget of ${subject} per ${b.period === 'DAILY' ? 'day' : 'month'}`} onClick=${() => setOpen({ section: 'budget', id: keyOf(b) })} /></td>
        </tr>`;
      })}</tbody></table>`)}
  </${AdminSection}>`;
}

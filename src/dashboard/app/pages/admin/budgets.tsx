// Budgets: spending limits of a user or a configuration per UTC day or month (0 = unlimited),
// beside what the current period has spent. `setBudget` creates or replaces one; the API has no
// delete, so "no limit" is all three limits at 0.
import { useEffect } from 'preact/hooks';
import { ADMIN_BUDGETS, SET_BUDGET } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { Form, numberField, SelectField, submitForm, TextField, useForm, type FormErrors } from '../../components/forms.tsx';
import { RowButton } from '../../components/row-actions.tsx';
import { formatCost } from '../../format.ts';
import type { BudgetPeriod, ConsoleAdminBudgetsQuery } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';
import { optionsOf, PERIOD_LABELS } from '../../labels.ts';

type Budget = ConsoleAdminBudgetsQuery['budgets'][number];

const PERIOD_OPTIONS = optionsOf(PERIOD_LABELS);

function subjectOptions(data: ConsoleAdminBudgetsQuery): [string, string][] {
  return [
    ...data.users.map((user): [string, string] => [user.id, `User ${user.name}`]),
    ...data.configurations.map((configuration): [string, string] => [configuration.id, `Configuration ${configuration.name}`]),
  ];
}

const keyOf = (budget: Budget) => `${budget.subjectId}:${budget.period}`;
const periodName = (period: BudgetPeriod) => (period === 'DAILY' ? 'day' : 'month');

function BudgetForm({ data, budget, onDone }: { data: ConsoleAdminBudgetsQuery; budget: Budget | null; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const options = subjectOptions(data);
  const form = useForm(budget ? 'edit-budget' : 'new-budget', {
    subjectId: budget?.subjectId ?? options[0]?.[0] ?? '',
    period: budget?.period ?? (PERIOD_OPTIONS[0]![0] as BudgetPeriod),
    maxRequests: String(budget?.maxRequests ?? 0),
    maxTokens: String(budget?.maxTokens ?? 0),
    maxCost: String(budget?.maxCost ?? 0),
  });
  useEffect(() => {
    if (form.values.subjectId === '' && options[0]) form.set('subjectId', options[0][0]);
  }, [data]);
  const save = async () => {
    const errors: FormErrors<typeof form.values> = {};
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
  return (
    <Form form={form} title={budget ? `Edit budget of ${subject}` : 'New budget'} onSubmit={save} onCancel={() => onDone(null)}>
      {budget ? null : (
        <>
          <SelectField form={form} name="subjectId" label="Limits whom" options={options} />
          <SelectField form={form} name="period" label="Period" options={PERIOD_OPTIONS} hint="A budget of the same subject and period is replaced." />
        </>
      )}
      <TextField form={form} name="maxRequests" label="Max requests" inputMode="numeric" hint="Provider calls per period; 0 = unlimited." />
      <TextField form={form} name="maxTokens" label="Max tokens" inputMode="numeric" hint="Prompt and completion tokens per period; 0 = unlimited." />
      <TextField form={form} name="maxCost" label="Max cost" inputMode="decimal" hint="In the currency of the model prices; 0 = unlimited." />
    </Form>
  );
}

/** "3 of 100", "0 of unlimited". */
function spentOf(spent: number, max: number, format: (value: number) => string = String): string {
  return `${format(spent)} of ${max === 0 ? 'unlimited' : format(max)}`;
}

/** The budgets with what each has spent this period; New budget, Edit. */
export function BudgetsSection(props: AdminProps) {
  const { data, error, setError } = useAdminData(ADMIN_BUDGETS, props.version);
  const { notice, editing, done, openForm } = useSectionState('budget', props, setError);
  const budgets = data?.budgets ?? null;
  const names = new Map(data ? subjectOptions(data) : []);
  const form =
    editing && data ? <BudgetForm key={editing.id ?? 'new'} data={data} budget={editing.id ? (budgets?.find((b) => keyOf(b) === editing.id) ?? null) : null} onDone={done} /> : null;
  return (
    <AdminSection
      id="budgets"
      title="Budgets"
      intro="Limits per user or configuration and UTC day or month, checked before every provider call; 0 = unlimited."
      newLabel="New budget"
      onNew={() => openForm(null)}
      form={form}
      notice={notice}
      error={error}
    >
      {listOr(budgets, 'No budget: nothing is limited.', (rows) => (
        <table id="budgets-table">
          <caption class="visually-hidden">Budgets</caption>
          <thead>
            <tr>
              <th scope="col">Limits</th><th scope="col">Period</th><th scope="col">Requests</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((b) => {
              const subject = names.get(b.subjectId) ?? b.subjectId;
              return (
                <tr key={keyOf(b)}>
                  <td>{subject}</td>
                  <td>{periodName(b.period)}</td>
                  <td>{spentOf(b.spent.requests, b.maxRequests)}</td>
                  <td>{spentOf(b.spent.tokens, b.maxTokens)}</td>
                  <td>{spentOf(b.spent.cost, b.maxCost, formatCost)}</td>
                  <td class="actions">
                    <RowButton text="Edit" row={`budget of ${subject} per ${periodName(b.period)}`} onClick={() => openForm(keyOf(b))} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}

// Form pieces of the Admin page: labelled fields whose error is shown beside them (linked with
// aria-describedby and aria-invalid), and one submit path that reads the API's typed answer. The
// rows' buttons (Edit, Delete that asks first) are in row-actions.tsx.
import type { ComponentChildren, HTMLInputTypeAttribute, InputHTMLAttributes, PartialInputHTMLAttributes } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Document, Session } from '../session.ts';

/** The key of the errors that belong to no field: shown at the top of the form. */
export const FORM = '_form';

/** A form's errors: by field name, and FORM for those of no field. */
export type FormErrors<V> = Partial<Record<(keyof V & string) | typeof FORM, string>>;

export interface FormState<V> {
  readonly id: string;
  readonly values: V;
  readonly set: <K extends keyof V>(name: K, value: V[K]) => void;
  readonly errors: FormErrors<V>;
  readonly setErrors: (errors: FormErrors<V>) => void;
  readonly busy: boolean;
  readonly setBusy: (busy: boolean) => void;
}

/**
 * One form's values and its errors by field name. `id` prefixes the ids of its fields, so two
 * forms never share one.
 */
export function useForm<V extends object>(id: string, initial: V): FormState<V> {
  const [values, setValues] = useState<V>(initial);
  const [errors, setErrors] = useState<FormErrors<V>>({});
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof V>(name: K, value: V[K]) => setValues((current) => ({ ...current, [name]: value }));
  return { id, values, set, errors, setErrors, busy, setBusy };
}

interface Issue {
  readonly path: readonly string[];
  readonly message: string;
}

/** What an answer of an `… | Error` union may carry. */
interface Refusal {
  readonly __typename?: string;
  readonly message?: string;
  readonly issues?: readonly Issue[];
}

/** The path an API issue names, without the leading "input" (["input", "baseUrl"] and ["baseUrl"] alike). */
export function issuePath(issue: Issue): string[] {
  return issue.path[0] === 'input' ? issue.path.slice(1) : [...issue.path];
}

/** Which field an issue's path belongs to; undefined = its first segment. */
export type FieldOf = (path: readonly string[]) => string | undefined;

/**
 * The errors of a typed error answer by field: each ValidationError issue goes to the field
 * `fieldOf(path)` names (its first path segment when fieldOf is absent or answers undefined), or
 * to the form when that field is not in `fields`; any other error member is the form's.
 */
export function errorsOf(answer: Refusal, fields: readonly string[], fieldOf?: FieldOf): Record<string, string> {
  const errors: Record<string, string> = {};
  const add = (key: string, message: string) => {
    errors[key] = errors[key] ? `${errors[key]}; ${message}` : message;
  };
  for (const issue of answer.issues ?? []) {
    const path = issuePath(issue);
    const field = fieldOf?.(path) ?? path[0];
    if (field !== undefined && fields.includes(field)) add(field, issue.message);
    else add(FORM, `${path.join('.') || 'input'}: ${issue.message}`);
  }
  if (Object.keys(errors).length === 0) add(FORM, answer.message ?? 'The server refused this.');
  return errors;
}

export interface Submission<TResult, TVariables, K extends keyof TResult, T extends string> {
  readonly session: Session;
  readonly document: Document<TResult, TVariables>;
  readonly variables: TVariables;
  /** The mutation's field in the answer (`createProvider`). */
  readonly field: K;
  /** The member that means "saved" (`Provider`). */
  readonly expect: T;
  readonly fieldOf?: FieldOf;
}

/**
 * Sends a form's mutation. Returns the answer when it is of type `expect`; otherwise sets the
 * form's errors (beside their fields when a ValidationError names them) and returns null.
 */
export async function submitForm<V extends object, TResult, TVariables, K extends keyof TResult, T extends string>(
  form: FormState<V>,
  { session, document, variables, field, expect, fieldOf }: Submission<TResult, TVariables, K, T>,
): Promise<Extract<TResult[K], { __typename?: T }> | null> {
  form.setBusy(true);
  form.setErrors({});
  try {
    const answer = (await session.request(document, variables))[field] as TResult[K] & Refusal;
    if (answer.__typename === expect) return answer as Extract<TResult[K], { __typename?: T }>;
    form.setErrors(errorsOf(answer, Object.keys(form.values), fieldOf) as FormErrors<V>);
    return null;
  } catch (error) {
    form.setErrors({ [FORM]: (error as Error).message } as FormErrors<V>);
    return null;
  } finally {
    form.setBusy(false);
  }
}

/**
 * Text as a number for the API: '' is `empty` (null: "not set"), anything else must be a finite
 * number (a whole one when `integer`). Problems go into `errors[name]`, found before sending.
 */
export function numberField<V extends object, E extends number | null = null>(
  form: FormState<V>,
  name: keyof V & string,
  errors: FormErrors<V>,
  { integer = false, empty = null as E } = {},
): number | E {
  const text = String(form.values[name] ?? '').trim();
  if (text === '') return empty;
  const value = Number(text);
  if (!Number.isFinite(value)) errors[name] = 'must be a number';
  else if (integer && !Number.isInteger(value)) errors[name] = 'must be a whole number';
  return value;
}

/** A form with its title, the errors that belong to no field, and Save / Cancel. Focuses its first field on open and the first invalid one after a refusal. */
export function Form<V extends object>({ form, title, onSubmit, onCancel, children }: { form: FormState<V>; title: string; onSubmit: () => void; onCancel: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    ref.current?.querySelector<HTMLElement>('input:not([type="hidden"]), select, textarea')?.focus();
  }, []);
  const fieldErrors = Object.keys(form.errors).filter((key) => key !== FORM).length;
  useEffect(() => {
    if (Object.keys(form.errors).length === 0) return;
    (ref.current?.querySelector<HTMLElement>('[aria-invalid="true"]') ?? ref.current?.querySelector<HTMLElement>('.form-error'))?.focus();
  }, [form.errors]);
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    if (!form.busy) onSubmit();
  };
  return (
    <form ref={ref} class="admin-form" id={form.id} noValidate onSubmit={submit}>
      <h3 id={`${form.id}-title`}>{title}</h3>
      {form.errors[FORM] ? (
        <p role="alert" class="error form-error" tabIndex={-1}>
          {form.errors[FORM]}
        </p>
      ) : null}
      {fieldErrors > 0 && !form.errors[FORM] ? (
        <p role="alert" class="error">
          Not saved: {fieldErrors === 1 ? 'one field needs' : `${fieldErrors} fields need`} a change (marked below).
        </p>
      ) : null}
      {children}
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The ids of a field's hint and error, for aria-describedby. */
export function describedBy(id: string, hint: unknown, error: unknown): string | undefined {
  return [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
}

/** A field's hint and its error (the `.field-error` a test reads through aria-describedby). */
export function Notes({ id, hint, error }: { id: string; hint?: ComponentChildren; error?: string | undefined }) {
  return (
    <>
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </>
  );
}

interface FieldProps<V> {
  readonly form: FormState<V>;
  readonly name: keyof V & string;
  readonly label: string;
  readonly hint?: string;
}

type InputExtras = Omit<PartialInputHTMLAttributes<HTMLInputElement>, 'form' | 'name' | 'label' | 'rows' | 'type' | 'value'>;

/** A labelled text input (or a textarea when `rows` is given). */
export function TextField<V extends object>({ form, name, label, hint, rows, type = 'text', ...rest }: FieldProps<V> & InputExtras & { rows?: number; type?: HTMLInputTypeAttribute }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const common = {
    id,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': describedBy(id, hint, error),
    value: String(form.values[name] ?? ''),
  };
  const update = (value: string) => form.set(name, value as V[typeof name]);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {rows ? (
        <textarea rows={rows} spellcheck={rest.spellcheck} {...common} onInput={(event) => update(event.currentTarget.value)} />
      ) : (
        <input {...({ ...rest, ...common, type } as InputHTMLAttributes)} onInput={(event) => update(event.currentTarget.value)} />
      )}
      <Notes id={id} hint={hint} error={error} />
    </div>
  );
}

/** A labelled select; `options` are `[value, label]` pairs. */
export function SelectField<V extends object>({ form, name, label, hint, options, onChange }: FieldProps<V> & { options: readonly (readonly [string, string])[]; onChange?: (value: string) => void }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const change = (event: { currentTarget: HTMLSelectElement }) => {
    form.set(name, event.currentTarget.value as V[typeof name]);
    onChange?.(event.currentTarget.value);
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={String(form.values[name] ?? '')} aria-invalid={error ? 'true' : undefined} aria-describedby={describedBy(id, hint, error)} onChange={change}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      <Notes id={id} hint={hint} error={error} />
    </div>
  );
}

/** A labelled checkbox holding a boolean. */
export function CheckboxField<V extends object>({ form, name, label, hint }: FieldProps<V>) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  return (
    <div class="field check">
      <input
        type="checkbox"
        id={id}
        checked={Boolean(form.values[name])}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(id, hint, error)}
        onChange={(event) => form.set(name, event.currentTarget.checked as V[typeof name])}
      />
      <label for={id}>{label}</label>
      <Notes id={id} hint={hint} error={error} />
    </div>
  );
}

/** Checkboxes holding a list of strings; `options` are `[value, label]` pairs. */
export function CheckboxListField<V extends object>({ form, name, legend, hint, options }: Omit<FieldProps<V>, 'label'> & { legend: string; options: readonly (readonly [string, string])[] }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const chosen = new Set((form.values[name] as readonly string[] | undefined) ?? []);
  const toggle = (value: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(value);
    else next.delete(value);
    form.set(name, options.map(([option]) => option).filter((option) => next.has(option)) as V[typeof name]);
  };
  return (
    <fieldset class="field choices" id={id} aria-describedby={describedBy(id, hint, error)}>
      <legend>{legend}</legend>
      {options.length === 0 ? <p class="empty">None to choose from.</p> : null}
      {options.map(([value, text], index) => (
        <span class="choice" key={value}>
          <input
            type="checkbox"
            id={`${id}-${index}`}
            checked={chosen.has(value)}
            aria-invalid={error && index === 0 ? 'true' : undefined}
            onChange={(event) => toggle(value, event.currentTarget.checked)}
          />
          <label for={`${id}-${index}`}>{text}</label>
        </span>
      ))}
      <Notes id={id} hint={hint} error={error} />
    </fieldset>
  );
}

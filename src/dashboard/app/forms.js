// Form pieces of the Admin page: labelled fields whose error is shown beside them (linked with
// aria-describedby and aria-invalid), one submit path that reads the API's typed answer, and a
// delete button that asks first (inline: no window.confirm).
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

/** The key of the errors that belong to no field: shown at the top of the form. */
export const FORM = '_form';

/**
 * One form's values and its errors by field name. `id` prefixes the ids of its fields, so two
 * forms never share one.
 */
export function useForm(id, initial) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);
  const set = (name, value) => setValues((current) => ({ ...current, [name]: value }));
  return { id, values, set, errors, setErrors, busy, setBusy };
}

/** The path an API issue names, without the leading "input" (["input", "baseUrl"] and ["baseUrl"] alike). */
export function issuePath(issue) {
  return issue.path[0] === 'input' ? issue.path.slice(1) : [...issue.path];
}

/**
 * The errors of a typed error answer by field: each ValidationError issue goes to the field
 * `fieldOf(path)` names (its first path segment when fieldOf is absent or answers undefined), or
 * to the form when that field is not in `fields`; any other error member is the form's.
 */
export function errorsOf(answer, fields, fieldOf) {
  const errors = {};
  const add = (key, message) => {
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

/**
 * Sends a form's mutation. Returns the answer when it is of type `expect`; otherwise sets the
 * form's errors (beside their fields when a ValidationError names them) and returns null.
 */
export async function submitForm(form, { session, document, variables, field, expect, fieldOf }) {
  form.setBusy(true);
  form.setErrors({});
  try {
    const answer = (await session.request(document, variables))[field];
    if (answer.__typename === expect) return answer;
    form.setErrors(errorsOf(answer, Object.keys(form.values), fieldOf));
    return null;
  } catch (error) {
    form.setErrors({ [FORM]: error.message });
    return null;
  } finally {
    form.setBusy(false);
  }
}

/**
 * Text as a number for the API: '' is `empty` (null: "not set"), anything else must be a finite
 * number (a whole one when `integer`). Problems go into `errors[name]`, found before sending.
 */
export function numberField(form, name, errors, { integer = false, empty = null } = {}) {
  const text = String(form.values[name] ?? '').trim();
  if (text === '') return empty;
  const value = Number(text);
  if (!Number.isFinite(value)) errors[name] = 'must be a number';
  else if (integer && !Number.isInteger(value)) errors[name] = 'must be a whole number';
  return value;
}

/** A form with its title, the errors that belong to no field, and Save / Cancel. Focuses its first field on open and the first invalid one after a refusal. */
export function Form({ form, title, onSubmit, onCancel, children }) {
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.querySelector('input:not([type="hidden"]), select, textarea')?.focus();
  }, []);
  const fieldErrors = Object.keys(form.errors).filter((key) => key !== FORM).length;
  useEffect(() => {
    if (Object.keys(form.errors).length === 0) return;
    (ref.current?.querySelector('[aria-invalid="true"]') ?? ref.current?.querySelector('.form-error'))?.focus();
  }, [form.errors]);
  const submit = (event) => {
    event.preventDefault();
    if (!form.busy) onSubmit();
  };
  return html`<form ref=${ref} class="admin-form" id=${form.id} noValidate onSubmit=${submit}>
    <h3 id=${`${form.id}-title`}>${title}</h3>
    ${form.errors[FORM] ? html`<p role="alert" class="error form-error" tabindex="-1">${form.errors[FORM]}</p>` : null}
    ${fieldErrors > 0 && !form.errors[FORM] ? html`<p role="alert" class="error">Not saved: ${fieldErrors === 1 ? 'one field needs' : `${fieldErrors} fields need`} a change (marked below).</p>` : null}
    ${children}
    <div class="actions">
      <button type="submit" disabled=${form.busy}>Save</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

function describedBy(id, hint, error) {
  return [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
}

function Notes({ id, hint, error }) {
  return html`${hint ? html`<p class="hint" id=${`${id}-hint`}>${hint}</p>` : null}
    ${error ? html`<p class="field-error" id=${`${id}-error`}>${error}</p>` : null}`;
}

/** A labelled text input (or a textarea when `rows` is given). */
export function TextField({ form, name, label, hint, rows, type = 'text', ...rest }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const props = {
    id,
    'aria-invalid': error ? 'true' : undefined,
    'aria-describedby': describedBy(id, hint, error),
    value: form.values[name] ?? '',
    onInput: (event) => form.set(name, event.currentTarget.value),
    ...rest,
  };
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${rows ? html`<textarea rows=${rows} ...${props}></textarea>` : html`<input type=${type} ...${props} />`}
    <${Notes} id=${id} hint=${hint} error=${error} />
  </div>`;
}

/** A labelled select; `options` are `[value, label]` pairs. */
export function SelectField({ form, name, label, hint, options, onChange }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const change = (event) => {
    form.set(name, event.currentTarget.value);
    onChange?.(event.currentTarget.value);
  };
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <select id=${id} value=${form.values[name] ?? ''} aria-invalid=${error ? 'true' : undefined} aria-describedby=${describedBy(id, hint, error)} onChange=${change}>
      ${options.map(([value, text]) => html`<option key=${value} value=${value}>${text}</option>`)}
    </select>
    <${Notes} id=${id} hint=${hint} error=${error} />
  </div>`;
}

/** A labelled checkbox holding a boolean. */
export function CheckboxField({ form, name, label, hint }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  return html`<div class="field check">
    <input type="checkbox" id=${id} checked=${Boolean(form.values[name])} aria-invalid=${error ? 'true' : undefined}
      aria-describedby=${describedBy(id, hint, error)} onChange=${(event) => form.set(name, event.currentTarget.checked)} />
    <label for=${id}>${label}</label>
    <${Notes} id=${id} hint=${hint} error=${error} />
  </div>`;
}

/** Checkboxes holding a list of strings; `options` are `[value, label]` pairs. */
export function CheckboxListField({ form, name, legend, hint, options }) {
  const id = `${form.id}-${name}`;
  const error = form.errors[name];
  const chosen = new Set(form.values[name] ?? []);
  const toggle = (value, on) => {
    const next = new Set(chosen);
    if (on) next.add(value);
    else next.delete(value);
    form.set(name, options.map(([option]) => option).filter((option) => next.has(option)));
  };
  return html`<fieldset class="field choices" id=${id} aria-describedby=${describedBy(id, hint, error)}>
    <legend>${legend}</legend>
    ${options.length === 0 ? html`<p class="empty">None to choose from.</p>` : null}
    ${options.map(
      ([value, text], index) => html`<span class="choice" key=${value}>
        <input type="checkbox" id=${`${id}-${index}`} checked=${chosen.has(value)} aria-invalid=${error && index === 0 ? 'true' : undefined} onChange=${(event) => toggle(value, event.currentTarget.checked)} />
        <label for=${`${id}-${index}`}>${text}</label>
      </span>`,
    )}
    <${Notes} id=${id} hint=${hint} error=${error} />
  </fieldset>`;
}

/** Delete, then "Yes, delete" / "Keep" in place. `label` says what goes (visually hidden on the first button). */
export function DeleteButton({ label, onDelete }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirm = useRef(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) return html`<button type="button" onClick=${() => setAsking(true)}>Delete<span class="visually-hidden"> ${label}</span></button>`;
  const yes = async () => {
    setBusy(true);
    try {
      await onDelete();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return html`<span class="confirm">Delete ${label}?
    <button type="button" ref=${confirm} class="danger" disabled=${busy} onClick=${yes}>Yes, delete</button>
    <button type="button" onClick=${() => setAsking(false)}>Keep</button></span>`;
}

/** A button whose accessible name says which row it acts on, as visually hidden text (never an aria-label). */
export function RowButton({ text, row, onClick, disabled }) {
  return html`<button type="button" disabled=${disabled} onClick=${onClick}>${text}<span class="visually-hidden"> ${row}</span></button>`;
}

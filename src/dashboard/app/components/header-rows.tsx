// Request headers typed anew (a provider's extra headers, an MCP server's): the stored values are
// write-only and never shown, so saving replaces them all with these rows.
import type { FormState } from './forms.tsx';

export interface HeaderRow {
  readonly header: string;
  readonly value: string;
}

/** The rows that say something (a blank row is ignored) as the object the API takes. */
export function headersOf(rows: readonly HeaderRow[]): Record<string, string> {
  return Object.fromEntries(rows.filter((row) => row.header.trim() !== '' || row.value !== '').map((row) => [row.header.trim(), row.value]));
}

/** `Header N` / `Value N` (password) rows with `Remove header N` and `Add header`; its error is the form's `headers` error. */
export function HeaderRows<V extends { headers: readonly HeaderRow[] }>({ form, legend, hint }: { form: FormState<V>; legend: string; hint: string }) {
  const rows = form.values.headers;
  const id = `${form.id}-headers`;
  const error = form.errors.headers;
  const put = (next: readonly HeaderRow[]) => form.set('headers', next as V['headers']);
  const change = (index: number, key: keyof HeaderRow, value: string) => put(rows.map((row, at) => (at === index ? { ...row, [key]: value } : row)));
  return (
    <fieldset class="field" id={id} aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}>
      <legend>{legend}</legend>
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
      {rows.map((row, index) => (
        <div class="header-row" key={index}>
          <span>
            <label for={`${id}-${index}-header`}>Header {index + 1}</label>
            <input id={`${id}-${index}-header`} value={row.header} aria-invalid={error ? 'true' : undefined} onInput={(event) => change(index, 'header', event.currentTarget.value)} />
          </span>
          <span>
            <label for={`${id}-${index}-value`}>Value {index + 1}</label>
            <input id={`${id}-${index}-value`} type="password" autocomplete="new-password" value={row.value} onInput={(event) => change(index, 'value', event.currentTarget.value)} />
          </span>
          <button type="button" onClick={() => put(rows.filter((_row, at) => at !== index))}>
            Remove<span class="visually-hidden"> header {index + 1}</span>
          </button>
        </div>
      ))}
      <button type="button" onClick={() => put([...rows, { header: '', value: '' }])}>
        Add header
      </button>
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

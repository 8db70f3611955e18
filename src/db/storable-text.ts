/**
 * What PostgreSQL cannot store, in the text a model or a tool produced: jsonb refuses the `\u0000`
 * escape and unpaired surrogate escapes (which JSON.stringify writes for NUL and lone surrogates),
 * text refuses NUL. One such character used to make a step (or the outcome) fail to store, so an
 * injected NUL could erase its own step from the audit trail (issue 7, found by
 * test/security/prompt-injection.test.ts). They are stored as U+FFFD; everything else verbatim.
 * The pattern consumes escaped backslashes first, so a literal `\\u0000` in the text stays as is.
 */
const UNSTORABLE_JSON_ESCAPE = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

export function storableJson(value: object): string {
  const json = JSON.stringify(value);
  // Without any `\u` escape there is nothing to replace (the usual case): skip the scan.
  if (!json.includes('\\u')) return json;
  return json.replace(UNSTORABLE_JSON_ESCAPE, (escape) => (escape === '\\\\' ? escape : '\\ufffd'));
}

export function storableText(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\ufffd');
}

/** Text from whatever a tool produced, made well formed (the content and artifact bounds both need it). */
// Non-fatal: invalid sequences become U+FFFD. BOM kept: coercion must not change valid text.
const utf8Lenient = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

// Node 20 has these (ES2024); the project's `lib` is ES2023, so they are typed here.
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * Valid UTF-8 text from whatever a tool produced: invalid byte sequences and lone UTF-16 surrogates
 * both become U+FFFD. A string that is already well formed is returned as the same object.
 */
export function coerceUtf8(value: string | Uint8Array): string {
  if (typeof value !== 'string') return utf8Lenient.decode(value);
  const text = value as unknown as WellFormedString;
  return text.isWellFormed() ? value : text.toWellFormed();
}

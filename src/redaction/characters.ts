/**
 * Lengths and caps in characters, i.e. Unicode code points (what `[...text].length` counts), not the
 * UTF-16 units of `text.length`: an emoji is one character, and no cap ever splits a surrogate pair.
 * A lone surrogate counts as one character. Every cap of the redaction room (table cells, log lines,
 * the redactor's 2 000 characters) is built on these.
 */

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** Characters (code points) of `text`; same as `[...text].length` without building the array. */
export function countCharacters(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    if (isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1))) {
      count--;
      index++;
    }
  }
  return count;
}

/** The UTF-16 index just after the first `max` characters (or the length when shorter). Stops counting at `max`. */
export function unitsOfCharacters(text: string, max: number): number {
  let units = 0;
  for (let chars = 0; chars < max && units < text.length; chars++) {
    units += isHigh(text.charCodeAt(units)) && isLow(text.charCodeAt(units + 1)) ? 2 : 1;
  }
  return units;
}

/**
 * `text` cut to at most `maxChars` characters, ending with `ellipsis` when cut (the ellipsis counts
 * towards the cap). Never splits a surrogate pair. Cheap for huge text: it stops counting at the cap.
 */
export function capCharacters(text: string, maxChars: number, ellipsis = '…'): string {
  // Code points never outnumber UTF-16 units.
  if (text.length <= maxChars) return text;
  if (unitsOfCharacters(text, maxChars) >= text.length) return text;
  const room = Math.max(0, maxChars - countCharacters(ellipsis));
  return text.slice(0, unitsOfCharacters(text, room)) + ellipsis;
}

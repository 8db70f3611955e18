// Two versions of a text side by side in one list, line by line: lines only in the old one marked
// removed, lines only in the new one marked added. The mark is text (a "−" or "+" and, for screen
// readers, the word), so the change reads without colour.
import './definition-diff.css';

export type DiffKind = 'same' | 'added' | 'removed';

export interface DiffLine {
  readonly kind: DiffKind;
  readonly text: string;
}

/**
 * The lines of `before` and `after` merged along their longest common subsequence (the classic
 * table: remote definitions are short, a few hundred lines at most, so quadratic is fine).
 */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i]![j] = a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ kind: 'same', text: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      // A replaced line reads removed first, then added.
      lines.push({ kind: 'removed', text: a[i++]! });
    } else {
      lines.push({ kind: 'added', text: b[j++]! });
    }
  }
  return lines;
}

const MARKS: Record<DiffKind, { readonly sign: string; readonly word: string }> = {
  same: { sign: ' ', word: 'unchanged' },
  added: { sign: '+', word: 'added' },
  removed: { sign: '−', word: 'removed' },
};

/** The diff of `before` and `after` under a caption; `id` names the list (tests and aria). */
export function DefinitionDiff({ id, caption, before, after }: { id: string; caption: string; before: string; after: string }) {
  const lines = diffLines(before, after);
  const changed = lines.some((line) => line.kind !== 'same');
  return (
    <div class="definition-diff">
      <p id={`${id}-caption`}>
        {caption}
        {changed ? '' : ': unchanged'}
      </p>
      {changed ? (
        <ol class="diff" id={id}>
          {lines.map((line, index) => (
            <li key={index} class={`diff-${line.kind}`} data-diff={line.kind}>
              <span class="diff-mark" aria-hidden="true">
                {MARKS[line.kind].sign}
              </span>
              {line.kind === 'same' ? null : <span class="visually-hidden">{MARKS[line.kind].word}: </span>}
              {line.text}
            </li>
          ))}
        </ol>
      ) : null}
    </div>
  );
}

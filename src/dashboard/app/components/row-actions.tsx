// Buttons of a list's rows: each names its row in visually hidden text (never an aria-label), and
// Delete asks first, in place (the console opens no dialog).
import { useEffect, useRef, useState } from 'preact/hooks';

/** Delete, then "Yes, delete" / "Keep" in place. `label` says what goes (visually hidden on the first button). */
export function DeleteButton({ label, onDelete }: { label: string; onDelete: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" onClick={() => setAsking(true)}>
        Delete<span class="visually-hidden"> {label}</span>
      </button>
    );
  const yes = async () => {
    setBusy(true);
    try {
      await onDelete();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <span class="confirm">
      Delete {label}?{' '}
      <button type="button" ref={confirm} class="danger" disabled={busy} onClick={yes}>
        Yes, delete
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}

/** A button whose accessible name says which row it acts on, as visually hidden text (never an aria-label). */
export function RowButton({ text, row, onClick, disabled }: { text: string; row: string; onClick: () => void; disabled?: boolean }) {
  return (
    <button type="button" disabled={disabled} onClick={onClick}>
      {text}
      <span class="visually-hidden"> {row}</span>
    </button>
  );
}

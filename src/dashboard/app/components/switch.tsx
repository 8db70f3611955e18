// An on/off switch: a checkbox with role "switch", so it is announced (and found by tests) as one.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * `checked` is what the server says; a flip shows at once and holds until the next answer brings
 * `checked` anew (a controlled checkbox alone would spring back while the change is on its way).
 */
export function Switch({ id, label, checked, disabled, onChange, describedBy }: {
  id: string;
  /** Its accessible name (text: a visually hidden part may say which row it belongs to). */
  label: ComponentChildren;
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
  describedBy?: string;
}) {
  const [shown, setShown] = useState(checked);
  useEffect(() => setShown(checked), [checked]);
  const flip = (next: boolean) => {
    setShown(next);
    onChange(next);
  };
  return (
    <span class="switch">
      <input type="checkbox" role="switch" id={id} checked={shown} disabled={disabled} aria-describedby={describedBy} onChange={(event) => flip(event.currentTarget.checked)} />
      <label for={id}>{label}</label>
    </span>
  );
}

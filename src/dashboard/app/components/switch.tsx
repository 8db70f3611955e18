// An on/off switch: a checkbox with role "switch", so it is announced (and found by tests) as one.
import type { ComponentChildren } from 'preact';

export function Switch({ id, label, checked, disabled, onChange, describedBy }: {
  id: string;
  /** Its accessible name (text: a visually hidden part may say which row it belongs to). */
  label: ComponentChildren;
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
  describedBy?: string;
}) {
  return (
    <span class="switch">
      <input type="checkbox" role="switch" id={id} checked={checked} disabled={disabled} aria-describedby={describedBy} onChange={(event) => onChange(event.currentTarget.checked)} />
      <label for={id}>{label}</label>
    </span>
  );
}

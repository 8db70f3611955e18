// htm bound to Preact: tagged templates that build virtual nodes. Interpolated strings become text
// nodes (never parsed as HTML); the console never sets HTML from a string.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);

/** JSON, indented, as text for a <pre>. */
export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

export function formatCost(value) {
  return typeof value === 'number' ? `$${value.toFixed(6)}` : '—';
}

export function formatTime(value) {
  return value ? new Date(value).toLocaleString() : '—';
}

/** A link inside the console: the href is always built here from a fixed route and an encoded id. */
export function runHref(id) {
  return `#/runs/${encodeURIComponent(id)}`;
}

/** The run statuses, from the one declaration of the run vocabulary (bundled: a constant, no server code). */
export { RUN_STATUSES as STATUSES } from '../../runtime/run.ts';

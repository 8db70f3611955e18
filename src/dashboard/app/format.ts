// How the console writes values as text. Everything here returns text: the console renders text
// nodes only, never HTML from a string.
import { RunStatus } from './gql/graphql.ts';

/** JSON, indented, as text for a <pre>. */
export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

export function formatCost(value: number | null | undefined): string {
  return typeof value === 'number' ? `$${value.toFixed(6)}` : '—';
}

export function formatTime(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

/** A link inside the console: the href is always built here from a fixed route and an encoded id. */
export function runHref(id: string): string {
  return `#/runs/${encodeURIComponent(id)}`;
}

/** The run statuses, from the schema's RunStatus enum (generated: no second list to keep in step). */
export const STATUSES: readonly RunStatus[] = Object.values(RunStatus);

/**
 * A run's id for people: the first 8 hex characters of its uuid, read from the global id (base64
 * of `Run:<uuid>`); any other id gives its own first 8 characters. For display only: links and
 * queries keep the full id.
 */
export function shortRunId(id: string): string {
  try {
    const uuid = /^Run:([0-9a-f]{8})/i.exec(atob(id));
    if (uuid?.[1]) return uuid[1].toLowerCase();
  } catch {
    // Not base64: not a global id.
  }
  return id.slice(0, 8);
}

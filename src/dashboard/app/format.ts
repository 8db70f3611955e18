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

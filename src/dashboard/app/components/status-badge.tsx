import type { RunStatus } from '../gql/graphql.ts';

/** A run's status as a coloured badge (the colour is never the only cue: the text says it). */
export function StatusBadge({ status }: { status: RunStatus }) {
  return <span class={`badge ${status.toLowerCase()}`}>{status}</span>;
}

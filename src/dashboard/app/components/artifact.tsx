import { pretty } from '../format.ts';
import type { ConsoleRunEventsSubscription } from '../gql/graphql.ts';

type StepEvent = Extract<ConsoleRunEventsSubscription['runEvents'], { __typename: 'RunStepEvent' }>;
/** One run-only output of a TOOL step, as the API serves it (a member of the Artifact union). */
export type ArtifactData = NonNullable<StepEvent['step']['artifacts']>[number];

/**
 * A TOOL step's artifact: a table, a text, or anything else as JSON. A member this console does
 * not know yet (UnknownArtifact, or a union member added later) is shown, never dropped.
 */
export function Artifact({ artifact }: { artifact: ArtifactData }) {
  switch (artifact.__typename) {
    case 'TableArtifact':
      return (
        <figure class="artifact table-artifact">
          <figcaption>{artifact.label || 'Table'}</figcaption>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  {artifact.columns.map((column, index) => (
                    <th key={index} scope="col">
                      {column}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {artifact.rows.map((row, rowIndex) => (
                  <tr key={rowIndex}>
                    {row.map((cell, index) => (
                      <td key={index}>{cell}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </figure>
      );
    case 'TextArtifact':
      return (
        <figure class="artifact text-artifact">
          <figcaption>{artifact.label || 'Text'}</figcaption>
          <pre>{artifact.text}</pre>
        </figure>
      );
    default: {
      // Typed as UnknownArtifact, but a newer server may send a member this build has never seen.
      const other = artifact as { __typename?: string; type?: string; label?: string; data?: unknown };
      return (
        <figure class="artifact unknown-artifact">
          <figcaption>
            {other.label || 'Artifact'} (type {other.type ?? other.__typename ?? 'unknown'})
          </figcaption>
          <pre>{pretty(other.data ?? other)}</pre>
        </figure>
      );
    }
  }
}

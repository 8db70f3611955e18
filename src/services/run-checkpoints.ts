import type { SecretBox } from '../db/secret-box.ts';
import type { LoopSettings } from '../runtime/loop-session.ts';
import type { ResumePoint } from '../runtime/resume-point.ts';
import type { RunStep } from '../runtime/run.ts';

/**
 * What a durable run stores to be continued by another process, sealed with the secret box like the
 * state of a run waiting for approval (the context binds it to its run, so a sealed blob cannot be
 * replayed onto another run). Content only: artifacts never enter it. At METADATA and NONE privacy
 * this is the only place the content of a live run exists; it is deleted when the run settles.
 *
 * - `start`: nothing ran yet but the run row: the prompt, to start again from the beginning.
 * - `point`: a resume point of the loop, with the options it runs with (as a suspension stores them).
 *   With `approval`: a decision was claimed (stored with the claim) but its APPROVAL step was not
 *   stored yet: whoever continues the run stores it first, before any call of the turn runs.
 */
export type RunCheckpoint =
  | { readonly start: { readonly prompt: string } }
  | {
      readonly point: ResumePoint;
      readonly settings: LoopSettings;
      readonly allowList: readonly string[] | null;
      readonly approval?: Extract<RunStep, { kind: 'APPROVAL' }>;
    };

const sealContext = (runId: string) => `run:${runId}:checkpoint`;

export function sealCheckpoint(secrets: SecretBox, runId: string, checkpoint: RunCheckpoint): string {
  return secrets.seal(JSON.stringify(checkpoint), sealContext(runId));
}

/** The checkpoint, opened; throws when it cannot be (another master key, another run's blob, damage). */
export function openCheckpoint(secrets: SecretBox, runId: string, sealed: string): RunCheckpoint {
  const checkpoint = JSON.parse(secrets.open(sealed, sealContext(runId))) as RunCheckpoint;
  if (typeof checkpoint !== 'object' || checkpoint === null || !('start' in checkpoint || 'point' in checkpoint)) {
    throw new Error('the checkpoint is not one this version can continue from');
  }
  return checkpoint;
}
